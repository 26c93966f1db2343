/** What a client presented: nothing, a key (Bearer or x-api-key), or an Authorization that is not Bearer. */
export type Credential = { kind: "none" } | { kind: "key"; value: string } | { kind: "malformed" };

/**
 * The credential a client presented: `Authorization: Bearer <key>` (OpenAI clients) or `x-api-key`
 * (Anthropic clients). Any other Authorization (`Basic …`, a bare key) is malformed: it fails like a
 * wrong key, and is never looked up as one.
 */
export function readCredential(headers: Headers): Credential {
  const auth = headers.get("authorization");
  if (auth !== null && auth.trim() !== "") {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? { kind: "key", value: m[1]! } : { kind: "malformed" };
  }
  const apiKey = headers.get("x-api-key");
  return apiKey !== null && apiKey.trim() !== "" ? { kind: "key", value: apiKey.trim() } : { kind: "none" };
}

/**
 * The presented credential as one string, for telling anonymous callers apart (an open-mode owner):
 * the key, a non-Bearer Authorization whole, or null. Authentication reads `readCredential`.
 */
export function presentedCredential(headers: Headers): string | null {
  const credential = readCredential(headers);
  if (credential.kind === "key") return credential.value;
  return credential.kind === "malformed" ? headers.get("authorization")!.trim() : null;
}

/** The address every local client shares: under `wrangler dev` no address can be trusted. */
export const LOCAL_ADDRESS = "local";

/**
 * The client's address for counting failed logins. Deployed on Cloudflare, CF-Connecting-IP is set by
 * the edge, which replaces whatever the client sent. Locally (SWITCHYARD_ENV=dev) the same header
 * comes from the client when it sends one (the dev server fills it in only when absent), so a
 * locked-out client could invent a new address: every local client shares one bucket instead.
 */
export function clientAddress(headers: Headers, env: { SWITCHYARD_ENV?: unknown } = {}): string {
  if (env.SWITCHYARD_ENV === "dev") return LOCAL_ADDRESS;
  return headers.get("cf-connecting-ip")?.trim() || "unknown";
}

export function isTruthy(value: unknown): boolean {
  return typeof value === "string" ? /^(1|true|yes|on)$/i.test(value.trim()) : value === true;
}
