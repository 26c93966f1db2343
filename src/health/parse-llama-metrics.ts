/**
 * llama-server's `GET /metrics` (with `--metrics`, Prometheus text) → the two gauges that tell load:
 * `llamacpp:requests_processing` (slots generating) and `llamacpp:requests_deferred` (requests
 * waiting for a slot, which `/slots` cannot show). Null when neither is present.
 */
export function parseLlamaMetrics(text: string): { processing: number; deferred: number } | null {
  const value = (name: string): number | undefined => {
    const m = text.match(new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:\\{[^}]*\\})?\\s+([0-9.eE+-]+)\\s*$`, "m"));
    return m ? Number(m[1]) : undefined;
  };
  const processing = value("llamacpp:requests_processing");
  const deferred = value("llamacpp:requests_deferred");
  if (processing === undefined && deferred === undefined) return null;
  return { processing: processing ?? 0, deferred: deferred ?? 0 };
}
