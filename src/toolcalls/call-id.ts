const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `call_` + 24 random alphanumerics, uniformly drawn (bytes ≥ 248 are redrawn to avoid bias). */
export function newCallId(): string {
  let out = "call_";
  const bytes = new Uint8Array(32);
  while (out.length < 29) {
    crypto.getRandomValues(bytes);
    for (const b of bytes) {
      if (b >= 248) continue;
      out += ALPHABET[b % 62];
      if (out.length === 29) break;
    }
  }
  return out;
}
