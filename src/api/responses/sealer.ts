// The crypto behind the opaque tokens clients carry between stateless turns and hand back: sealed
// or signed with the deployment's key, so they cannot be read or forged elsewhere.
import { xchacha20poly1305 } from "@noble/ciphers/chacha.js";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";

/**
 * Opaque tokens a client carries between stateless turns and hands back (a Responses reasoning
 * item's `encrypted_content`, an Anthropic thinking block's `signature`). Sealing is synchronous so
 * the stream encoders can seal as they write; the deployment's key comes from `sealKey()`.
 *
 * - `seal`/`open`: XChaCha20-Poly1305 with a random nonce and the purpose as associated data, so a
 *   token made for one purpose (or by another deployment) never opens as another.
 * - `sign`/`verify`: HMAC-SHA256 over purpose and text, for values the client may read but not forge.
 */
export interface Sealer {
  seal(purpose: string, text: string): string;
  /** The text, or null for a token that was not sealed by this deployment for this purpose. */
  open(purpose: string, token: string): string | null;
  sign(purpose: string, text: string): string;
  verify(purpose: string, text: string, signature: string): boolean;
}

/**
 * Seals `{[field]: text}` for `purpose`; `openField` gives the text back, or null for a token this
 * deployment did not seal for that purpose (or one whose content is not of that shape).
 */
export function sealField(sealer: Sealer, purpose: string, field: string, text: string): string {
  return sealer.seal(purpose, JSON.stringify({ [field]: text }));
}

export function openField(sealer: Sealer | undefined, purpose: string, field: string, token: string): string | null {
  const opened = sealer?.open(purpose, token);
  if (opened == null) return null;
  try {
    const value: unknown = JSON.parse(opened);
    const text = value && typeof value === "object" ? (value as Record<string, unknown>)[field] : undefined;
    return typeof text === "string" ? text : null;
  } catch {
    return null;
  }
}

/**
 * `sealer` with every token bound to `owner` (the caller, as response-owner.ts names it): the owner
 * joins the purpose in the associated data (and in what is signed), so a token one key got does not
 * open for another key; it is dropped like a forged one.
 */
export function bindSealer(sealer: Sealer, owner: string): Sealer {
  // The owner ("key:<id>", "credential:<hex>", "anonymous") never holds a NUL, so the pair is unambiguous.
  const bound = (purpose: string) => `${purpose}\u0000${owner}`;
  return {
    seal: (purpose, text) => sealer.seal(bound(purpose), text),
    open: (purpose, token) => sealer.open(bound(purpose), token),
    sign: (purpose, text) => sealer.sign(bound(purpose), text),
    verify: (purpose, text, signature) => sealer.verify(bound(purpose), text, signature),
  };
}

const PREFIX = "sy1.";
const NONCE_BYTES = 24;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

export function createSealer(key: Uint8Array): Sealer {
  if (key.length !== 32) throw new Error("A sealing key is 32 bytes.");
  return {
    seal(purpose, text) {
      const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
      const sealed = xchacha20poly1305(key, nonce, encoder.encode(purpose)).encrypt(encoder.encode(text));
      const out = new Uint8Array(NONCE_BYTES + sealed.length);
      out.set(nonce);
      out.set(sealed, NONCE_BYTES);
      return PREFIX + toBase64Url(out);
    },
    open(purpose, token) {
      if (!token.startsWith(PREFIX)) return null;
      const bytes = fromBase64Url(token.slice(PREFIX.length));
      if (!bytes || bytes.length < NONCE_BYTES + 16) return null;
      try {
        const plain = xchacha20poly1305(key, bytes.subarray(0, NONCE_BYTES), encoder.encode(purpose)).decrypt(bytes.subarray(NONCE_BYTES));
        return decoder.decode(plain);
      } catch {
        return null;
      }
    },
    sign(purpose, text) {
      return PREFIX + toBase64Url(hmac(sha256, key, encoder.encode(`${purpose}\u0000${text}`)));
    },
    verify(purpose, text, signature) {
      const expected = this.sign(purpose, text);
      if (expected.length !== signature.length) return false;
      let diff = 0;
      for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ signature.charCodeAt(i);
      return diff === 0;
    },
  };
}

function toBase64Url(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(s: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return null;
  try {
    const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((s.length + 3) % 4));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}
