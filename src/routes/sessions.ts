import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { loadConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { sessionHub } from "../upstreams/browser/browser-upstream.ts";
import { GRANT_HEADER, type ServeGrant } from "../upstreams/browser/serve-grant.ts";
import { requireServe } from "../auth/principal.ts";

/**
 * The serve credential, checked, and what it grants the session it opens: a serve key's own
 * `serves`, or for SERVE_TOKEN the configuration's `browser.serveTokenServes` (default: everyone).
 */
async function serveGrant(c: Context<AppEnv>): Promise<ServeGrant> {
  const via = await requireServe(c);
  if (via.via === "key") return { keyId: via.key.id, serves: via.key.serves };
  return { keyId: null, serves: loadConfig(c.env).browser.serveTokenServes };
}

/** `POST /v1/sessions/ticket`: a one-use, short-lived ticket, so a browser never puts the token in a URL. */
export async function issueSessionTicket(c: Context<AppEnv>): Promise<Response> {
  // A key with the serve scope, or SERVE_TOKEN (docs/relay-protocol.md).
  const grant = await serveGrant(c);
  const { ticket, expiresInMs } = await sessionHub(c.env).issueTicket(grant);
  return c.json({ ticket, expires_in: Math.round(expiresInMs / 1000) }, 200, { "cache-control": "no-store" });
}

/** `GET /v1/sessions`: the serving page's WebSocket, authenticated before the upgrade. */
export async function connectSession(c: Context<AppEnv>): Promise<Response> {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ProxyError({ status: 426, code: "upgrade_required", message: "GET /v1/sessions is a WebSocket endpoint (see docs/relay-protocol.md)." });
  }
  const ticket = c.req.query("ticket");
  const hubUrl = new URL("https://hub/connect");
  const headers = new Headers({ upgrade: "websocket" });
  if (ticket) hubUrl.searchParams.set("ticket", ticket);
  else {
    headers.set(GRANT_HEADER, JSON.stringify(await serveGrant(c)));
    hubUrl.searchParams.set("verified", "1");
  }
  const res = await sessionHub(c.env).fetch(hubUrl, { headers });
  // A fresh Response: the hub's 101 has immutable headers, and the app adds x-request-id.
  if (res.status === 101) return new Response(null, { status: 101, webSocket: res.webSocket });
  const err = (await res.json()) as { status: number; code: string; message: string };
  throw new ProxyError(err);
}
