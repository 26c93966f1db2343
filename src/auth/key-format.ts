// Team keys: `sy-` + 32 random bytes in base64url. Only the SHA-256 hash is ever stored; a slow KDF
// would cost tens of ms of CPU per request on Workers, and 256 random bits need no stretching.

import { randomBase64url } from "../lib/ids.ts";

export const KEY_PREFIX = "sy-";
const KEY_PATTERN = /^sy-[A-Za-z0-9_-]{43}$/;

export function generateKey(): string {
  return randomBase64url(KEY_PREFIX, 32);
}

/** A short public id for a key (never derived from the secret). */
export function generateKeyId(): string {
  return randomBase64url("key_", 9);
}

export function looksLikeKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** Lowercase hex SHA-256 of the key. */
export async function hashKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Compares two secrets in time that depends only on their lengths, never on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  const n = Math.max(x.length, y.length);
  for (let i = 0; i < n; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}
