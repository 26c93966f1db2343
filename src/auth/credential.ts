/**
 * The credential a client presented: `Authorization: Bearer <key>` (OpenAI clients) or `x-api-key`
 * (Anthropic clients). A non-Bearer Authorization is returned whole, so it fails like a wrong key.
 */
export function presentedCredential(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth !== null && auth.trim() !== "") {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? m[1]! : auth.trim();
  }
  const apiKey = headers.get("x-api-key");
  return apiKey !== null && apiKey.trim() !== "" ? apiKey.trim() : null;
}

/**
 * The client's address for counting failed logins. On Cloudflare, CF-Connecting-IP is set by the edge
 * and cannot be forged; elsewhere (tests, some local setups) every client shares one bucket.
 */
export function clientAddress(headers: Headers): string {
  return headers.get("cf-connecting-ip")?.trim() || "unknown";
}

export function isTruthy(value: unknown): boolean {
  return typeof value === "string" ? /^(1|true|yes|on)$/i.test(value.trim()) : value === true;
}
