// Every random id Switchyard makes, in one place. Each scheme keeps the format its clients and stores
// know (prefix, length, alphabet); all draw from crypto.getRandomValues.

const ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

// Ids are drawn from one pool of random bytes, refilled 256 at a time (a request uses about 60: its
// id, its completion's id, with traces on its trace and span ids). For alphanumerics a byte ≥ 248
// is redrawn: 248 is 4 × 62, so `b % 62` is uniform on the rest (taking every byte would make the
// first eight characters of the alphabet likelier than the others).
const pool = new Uint8Array(256);
let next = pool.length;

/** The pool's next random byte. */
function randomByte(): number {
  if (next === pool.length) {
    crypto.getRandomValues(pool);
    next = 0;
  }
  return pool[next++]!;
}

/** `prefix` + n random alphanumerics, uniformly drawn (e.g. `chatcmpl-…`, `call_…`, `req_…`). */
export function randomId(prefix: string, n = 24): string {
  let out = prefix;
  for (let i = 0; i < n; ) {
    const b = randomByte();
    if (b < 248) {
      out += ALNUM[b % 62];
      i++;
    }
  }
  return out;
}

/** `prefix` + `bytes` random bytes in base64url without padding (team keys, key ids). */
export function randomBase64url(prefix: string, bytes: number): string {
  let s = "";
  for (const b of crypto.getRandomValues(new Uint8Array(bytes))) s += String.fromCharCode(b);
  return prefix + btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** `prefix` + `bytes` random bytes in lowercase hex (session tickets, session ids, trace and span ids). */
export function randomHex(prefix: string, bytes: number): string {
  let out = prefix;
  for (let i = 0; i < bytes; i++) out += HEX[randomByte()];
  return out;
}

/** A random (version 4) UUID: stream-slot lease ids. */
export function randomUuid(): string {
  return crypto.randomUUID();
}
