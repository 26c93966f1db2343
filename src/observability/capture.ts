// Capture (opt-in, for the deployment or for one key): a request's body and its answer as the request
// log keeps them, every configured secret redacted and each part cut at a bound with a marker (pure; a
// stream's answer is assembled from its events in run-facts.ts).
import { redactSecrets } from "../errors/redact-secrets.ts";

/** What `GET /v1/admin/requests/{id}` shows under `capture`. */
export interface Capture {
  /** The request body as received (JSON text), redacted and bounded. */
  request: string;
  /** The answer: a non-stream body as sent, or a stream's text, reasoning and tool calls assembled, with the model's raw text when the rewriter changed it (JSON text). */
  response: string;
  /** Some part was cut at `captureMaxBytes`, or the stream was longer than what was kept. */
  truncated: boolean;
}

/** The response header that tells a client its request is being captured (deployment-wide, or for its key): `on`. */
export const CAPTURE_HEADER = "x-switchyard-capture";

/** Whether requests made with `key` are captured: the log on, and capture on for the deployment or for the key. */
export function capturedFor(o: { log: boolean; capture: boolean }, key: { capture: boolean } | undefined): boolean {
  return o.log && (o.capture || key?.capture === true);
}

/** The marker that ends a part cut at the bound. */
export const TRUNCATED_MARKER = "…[truncated by Switchyard]";

/** `text` with every secret taken out, cut to at most `maxBytes` of UTF-8 (the marker included). */
export function boundedText(text: string, secrets: readonly string[], maxBytes: number): { text: string; truncated: boolean } {
  const clean = redactSecrets(text, secrets);
  const bytes = new TextEncoder().encode(clean);
  if (bytes.length <= maxBytes) return { text: clean, truncated: false };
  const room = Math.max(0, maxBytes - new TextEncoder().encode(TRUNCATED_MARKER).length);
  // A character cut in two at the bound is dropped (the decoder's U+FFFD is removed).
  const head = new TextDecoder().decode(bytes.subarray(0, room)).replace(/\uFFFD$/, "");
  return { text: head + TRUNCATED_MARKER, truncated: true };
}

/** The configured secrets' values: ADMIN_TOKEN, SERVE_TOKEN, each target's and the collector's apiKeySecret, and the caller's own credential. */
export function secretValues(env: Readonly<Record<string, unknown>>, names: readonly string[], credential: string | undefined): string[] {
  const values = names.map((n) => env[n]).filter((v): v is string => typeof v === "string" && v !== "");
  return credential ? [...values, credential] : values;
}
