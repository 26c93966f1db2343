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
  return readGrant(text) ?? { keyId: null, serves: [] };
}

/** Reads a serialized grant, or null when there is none or it is malformed. */
export function readGrant(text: string | null): ServeGrant | null {
  if (text === null) return null;
  try {
    const g = JSON.parse(text) as Partial<ServeGrant>;
    const keyId = typeof g.keyId === "string" ? g.keyId : null;
    if (g.serves === null) return { keyId, serves: null };
    if (Array.isArray(g.serves) && g.serves.every((s) => typeof s === "string")) return { keyId, serves: g.serves };
  } catch {}
  return null;
}

/**
 * What the hub last heard from the admin about a serve key: revoked, or its `serves` changed. The
 * hub applies it to a session connecting with that key's grant, so a grant read just before the
 * change (a ticket, a cached key in another isolate) cannot outlive it.
 */
export type ServeKeyChange = { revoked: true } | { revoked: false; serves: string[] | null };

/** Pure: `grant` as it stands after `change` (null: the key was revoked, the grant admits no session). */
export function applyServeKeyChange(grant: ServeGrant, change: ServeKeyChange | undefined): ServeGrant | null {
  if (!change) return grant;
  if (change.revoked) return null;
  return { keyId: grant.keyId, serves: change.serves };
}
