// An upstream may quote what it received (a proxy in front of llama-server echoing the request's
// `Authorization: Bearer <key>` in a 400, a browser page repeating its serve token), so upstream text
// is redacted before it becomes an error message or a log line.

export const REDACTED = "[redacted]";

/** Shorter strings are left alone: replacing them would mangle ordinary text. */
const MIN_SECRET_LENGTH = 8;

/** Pure: `text` with every occurrence of each secret (of 8 characters or more) replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: Iterable<string>): string {
  let out = text;
  // Longest first, so a secret containing another is taken out whole.
  const list = [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  for (const s of list) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/**
 * Names of the Worker variables that hold secrets: ADMIN_TOKEN, SERVE_TOKEN and every one the
 * configuration names (each `apiKeySecret`, of targets, routers and the collector alike: found by
 * its schema's marks, src/config/config-secrets.ts).
 */
export function secretNames(config: { secrets: { names: readonly string[] } } | null): string[] {
  return ["ADMIN_TOKEN", "SERVE_TOKEN", ...(config?.secrets.names ?? [])];
}

// The secrets this isolate has seen in its environment. A Worker isolate serves one deployment, so in
// production this holds a handful of values; the bound only matters to tests that vary the secrets.
const known = new Set<string>();
const MAX_KNOWN = 256;

/** Records the values of `names` in `env` as secrets to redact (called where the configuration is loaded). */
export function rememberSecrets(env: object, names: Iterable<string>): void {
  const vars = env as Record<string, unknown>;
  for (const name of names) remember(vars[name]);
}

/** Records secret values written in the configuration itself (headers) as secrets to redact. */
export function rememberSecretValues(values: Iterable<string>): void {
  for (const value of values) remember(value);
}

function remember(value: unknown): void {
  if (typeof value !== "string" || value.length < MIN_SECRET_LENGTH || known.has(value)) return;
  known.add(value);
  if (known.size > MAX_KNOWN) known.delete(known.values().next().value!);
}

/** Upstream text with every secret this isolate knows taken out: use it wherever upstream text enters. */
export function redactKnownSecrets(text: string): string {
  return known.size ? redactSecrets(text, known) : text;
}
