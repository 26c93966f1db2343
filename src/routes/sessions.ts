import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { sessionHub } from "../upstreams/browser/browser-upstream.ts";
import { requireServe } from "../auth/principal.ts";

/** `POST /v1/sessions/ticket`: a one-use, short-lived ticket, so a browser never puts the token in a URL. */
export async function issueSessionTicket(c: Context<AppEnv>): Promise<Response> {
  // A key with the serve scope, or SERVE_TOKEN (docs/relay-protocol.md).
  await requireServe(c);
  const { ticket, expiresInMs } = await sessionHub(c.env).issueTicket();
  return c.json({ ticket, expires_in: Math.round(expiresInMs / 1000) }, 200, { "cache-control": "no-store" });
}

/** `GET /v1/sessions`: the serving page's WebSocket, authenticated before the upgrade. */
export async function connectSession(c: Context<AppEnv>): Promise<Response> {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ProxyError({ status: 426, code: "upgrade_required", message: "GET /v1/sessions is a WebSocket endpoint (see docs/relay-protocol.md)." });
  }
  const ticket = c.req.query("ticket");
  const hubUrl = new URL("https://hub/connect");
  if (ticket) hubUrl.searchParams.set("ticket", ticket);
  else {
    await requireServe(c);
    hubUrl.searchParams.set("verified", "1");
  }
  const res = await sessionHub(c.env).fetch(hubUrl, { headers: { upgrade: "websocket" } });
  // A fresh Response: the hub's 101 has immutable headers, and the app adds x-request-id.
  if (res.status === 101) return new Response(null, { status: 101, webSocket: res.webSocket });
  const err = (await res.json()) as { status: number; code: string; message: string };
  throw new ProxyError(err);
}
