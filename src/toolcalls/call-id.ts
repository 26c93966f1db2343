const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const pool = new Uint8Array(256);
let next = pool.length;

/** `call_` + 24 random alphanumerics, uniformly drawn (bytes ≥ 248 are redrawn to avoid bias). */
export function newCallId(): string {
  let out = "call_";
  while (out.length < 29) {
    if (next === pool.length) {
      crypto.getRandomValues(pool);
      next = 0;
    }
    const b = pool[next++]!;
    if (b < 248) out += ALPHABET[b % 62];
  }
  return out;
}
