// The serve routes: tickets for a serving page, and its WebSocket (docs/relay-protocol.md §1).
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { loadConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { sessionHub } from "../upstreams/browser/browser-upstream.ts";
import { GRANT_HEADER, type ServeGrant } from "../upstreams/browser/serve-grant.ts";
import { requireServe } from "../auth/principal.ts";
import { keyStore } from "../auth/key-directory.ts";
import { offeredModels } from "../upstreams/browser/offered-models.ts";

/**
 * The serve credential, checked, and what it grants the session it opens: a serve key's own
 * `serves`, or for SERVE_TOKEN the configuration's `browser.serveTokenServes` (default: everyone).
 */
async function serveGrant(c: Context<AppEnv>): Promise<ServeGrant> {
  const via = await requireServe(c);
  if (via.via === "key") return { keyId: via.key.id, serves: via.key.serves };
  return { keyId: null, serves: loadConfig(c.env).browser.serveTokenServes };
}

/**
 * A ticket, used up, and what it grants now: its serve key is read again (not from a cache), so a key
 * revoked since the ticket was issued opens nothing (403) and a key whose `serves` changed opens a
 * session with the new list. A SERVE_TOKEN ticket takes the configuration's current list.
 */
async function ticketGrant(c: Context<AppEnv>, ticket: string): Promise<ServeGrant> {
  const held = await sessionHub(c.env).redeemTicket(ticket);
  if (!held) {
    throw new ProxyError({ status: 403, code: "invalid_ticket", message: "The session ticket is unknown, used or expired: get a new one from POST /v1/sessions/ticket (tickets are one-use and last 60 s)." });
  }
  if (held.keyId === null) {
    if (typeof c.env.SERVE_TOKEN !== "string" || c.env.SERVE_TOKEN === "") throw revokedSince("SERVE_TOKEN is no longer set");
    return { keyId: null, serves: loadConfig(c.env).browser.serveTokenServes };
  }
  const key = await keyStore(c.env).get(held.keyId);
  if (!key || key.revokedAt !== null || !key.scopes.includes("serve")) throw revokedSince("its serve key was revoked");
  return { keyId: key.id, serves: key.serves };
}

const revokedSince = (why: string) =>
  new ProxyError({ status: 403, code: "invalid_serve_key", message: `This ticket may no longer open a session: ${why} after the ticket was issued. Connect with a valid serve credential.` });

/** `POST /v1/sessions/ticket`: a one-use, short-lived ticket, so a browser never puts the token in a URL. */
export async function issueSessionTicket(c: Context<AppEnv>): Promise<Response> {
  // A key with the serve scope, or SERVE_TOKEN (docs/relay-protocol.md).
  const grant = await serveGrant(c);
  const { ticket, expiresInMs } = await sessionHub(c.env).issueTicket(grant);
  return c.json({ ticket, expires_in: Math.round(expiresInMs / 1000) }, 200, { "cache-control": "no-store" });
}

/**
 * `GET /v1/sessions/models`: the models this deployment offers to tabs, for a serve credential — each
 * browser target's model id, its GGUF URL when tabs run it with llama.cpp, its self-hosted web-llm
 * record when it has one (docs/relay-protocol.md §1).
 */
export async function listOfferedModels(c: Context<AppEnv>): Promise<Response> {
  await serveGrant(c);
  return c.json({ object: "list", data: offeredModels(loadConfig(c.env)) }, 200, { "cache-control": "no-store" });
}

/** `GET /v1/sessions`: the serving page's WebSocket, authenticated before the upgrade. */
export async function connectSession(c: Context<AppEnv>): Promise<Response> {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ProxyError({ status: 426, code: "upgrade_required", message: "GET /v1/sessions is a WebSocket endpoint (see docs/relay-protocol.md)." });
  }
  const ticket = c.req.query("ticket");
  const grant = ticket ? await ticketGrant(c, ticket) : await serveGrant(c);
  const hubUrl = new URL("https://hub/connect?verified=1");
  const headers = new Headers({ upgrade: "websocket", [GRANT_HEADER]: JSON.stringify(grant) });
  const res = await sessionHub(c.env).fetch(hubUrl, { headers });
  // A fresh Response: the hub's 101 has immutable headers, and the app adds x-request-id.
  if (res.status === 101) return new Response(null, { status: 101, webSocket: res.webSocket });
  const err = (await res.json()) as { status: number; code: string; message: string };
  throw new ProxyError(err);
}
