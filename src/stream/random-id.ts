const ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** `prefix` + n random alphanumerics (e.g. `chatcmpl-…`, `call_…`). */
export function randomId(prefix: string, n = 24): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  let out = prefix;
  for (const b of bytes) out += ALNUM[b % 62];
  return out;
}
