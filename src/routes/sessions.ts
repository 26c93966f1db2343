import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { sessionHub } from "../upstreams/browser/browser-upstream.ts";

/**
 * Checks the serve credential (`Authorization: Bearer …`) before anything reaches the hub: 401
 * without one, 403 for a wrong one. Until team keys exist the only serve credential is the
 * `SERVE_TOKEN` secret; without it nobody can serve, in dev too (`npm start` generates one).
 */
export function checkServeCredential(c: Context<AppEnv>): void {
  const header = c.req.header("authorization") ?? "";
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) {
    throw new ProxyError({
      status: 401,
      code: "missing_credential",
      message: "Serving from a browser needs a serve credential: send Authorization: Bearer <SERVE_TOKEN>, or connect with a ticket from POST /v1/sessions/ticket.",
    });
  }
  const expected = c.env.SERVE_TOKEN;
  if (typeof expected !== "string" || expected === "" || !sameSecret(m[1]!, expected)) {
    throw new ProxyError({
      status: 403,
      code: "invalid_serve_key",
      message:
        typeof expected === "string" && expected !== ""
          ? "This credential may not serve: it is not the SERVE_TOKEN."
          : "No serve credential is configured here: set the SERVE_TOKEN secret (`wrangler secret put SERVE_TOKEN`; `npm start` generates one in dev).",
    });
  }
}

/** `POST /v1/sessions/ticket`: a one-use, short-lived ticket, so a browser never puts the token in a URL. */
export async function issueSessionTicket(c: Context<AppEnv>): Promise<Response> {
  checkServeCredential(c);
  const { ticket, expiresInMs } = await sessionHub(c.env as unknown as Record<string, unknown>).issueTicket();
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
    checkServeCredential(c);
    hubUrl.searchParams.set("verified", "1");
  }
  const res = await sessionHub(c.env as unknown as Record<string, unknown>).fetch(hubUrl, { headers: { upgrade: "websocket" } });
  // A fresh Response: the hub's 101 has immutable headers, and the app adds x-request-id.
  if (res.status === 101) return new Response(null, { status: 101, webSocket: res.webSocket });
  const err = (await res.json()) as { status: number; code: string; message: string };
  throw new ProxyError(err);
}

function sameSecret(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}
