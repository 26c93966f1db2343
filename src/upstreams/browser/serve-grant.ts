/**
 * Who connected a browser session, and whose requests it may take: kept in the session's socket
 * attachment (and in its ticket until it connects). The hub places a relayed request only on a
 * session whose grant admits the request's key (docs/security.md, "Browser sessions and prompts").
 */
export interface ServeGrant {
  /** The `serve` key that connected the session; null: the SERVE_TOKEN secret. */
  keyId: string | null;
  /** Key ids whose requests the session takes; null: every request's, keyless ones included. */
  serves: string[] | null;
}

/** The header carrying a header-authenticated session's grant from the Worker to the hub's /connect. */
export const GRANT_HEADER = "x-switchyard-grant";

/** A grant that admits every request (a session connected before grants existed is one). */
export const SERVES_EVERYONE: ServeGrant = { keyId: null, serves: null };

/** Pure: whether a session holding `grant` may take a request made with the key `keyId` (undefined: no key). */
export function mayServe(grant: ServeGrant | undefined, keyId: string | undefined): boolean {
  const serves = grant?.serves ?? null;
  return serves === null || (keyId !== undefined && serves.includes(keyId));
}

/** Reads a grant the Worker serialized (`JSON.stringify(grant)`); anything malformed admits nobody. */
export function parseGrant(text: string | null): ServeGrant {
  const nobody: ServeGrant = { keyId: null, serves: [] };
  if (text === null) return nobody;
  try {
    const g = JSON.parse(text) as Partial<ServeGrant>;
    const keyId = typeof g.keyId === "string" ? g.keyId : null;
    if (g.serves === null) return { keyId, serves: null };
    if (Array.isArray(g.serves) && g.serves.every((s) => typeof s === "string")) return { keyId, serves: g.serves };
  } catch {}
  return nobody;
}
