// The SessionHub Durable Object: browser sessions and the relay (docs/relay-protocol.md), wired
// together here: the sessions and their sockets (session-registry.ts), the tickets and serve-key
// changes in SQLite (hub-storage.ts), the requests in flight (relays-in-flight.ts), the page's
// messages (page-protocol.ts), the requests held while every session for their model says it is not
// loaded (loading-holds.ts), and the alarm that closes silent sessions.
import { DurableObject } from "cloudflare:workers";
import { PING_TEXT, PONG_TEXT } from "../../schemas/relay.ts";
import { HubStorage } from "./hub-storage.ts";
import { HOLD_MAX_MS, LoadingHolds } from "./loading-holds.ts";
import { readPageMessage } from "./page-protocol.ts";
import type { RelayStart } from "./relay-dispatch.ts";
import { RelaysInFlight } from "./relays-in-flight.ts";
import { GRANT_HEADER, parseGrant, SERVES_EVERYONE, type ServeGrant } from "./serve-grant.ts";
import { SessionRegistry } from "./session-registry.ts";

/**
 * One instance ("hub") holds every serving page's WebSocket (Hibernation API), issues one-use
 * tickets, queues relayed requests per session and model (web-llm runs one generation per model at a
 * time and its interrupt is engine-wide), and streams each request's page messages back to the Worker
 * as JSON lines. An alarm closes sessions that stopped pinging at the moment they go silent, whether
 * or not a request comes (alarms wake a hibernating object; the pings themselves never do).
 */
export class SessionHub extends DurableObject<Env> {
  private readonly storage: HubStorage;
  private readonly registry: SessionRegistry;
  private readonly relays: RelaysInFlight;
  private readonly holds = new LoadingHolds();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Pings are answered without waking the object; their time is the session's liveness.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING_TEXT, PONG_TEXT));
    this.storage = new HubStorage(ctx.storage.sql);
    this.registry = new SessionRegistry(ctx, (session, why) => this.relays.sessionGone(session.sessionId, why));
    this.relays = new RelaysInFlight(this.registry);
  }

  /**
   * A one-use ticket for `GET /v1/sessions?ticket=…` (the caller has checked the serve credential);
   * the session it opens holds `grant`.
   */
  issueTicket(grant: ServeGrant): { ticket: string; expiresInMs: number } {
    return this.storage.issueTicket(grant);
  }

  /**
   * Uses up a ticket: the grant it was issued with, or null for a ticket that is unknown, used,
   * expired or from before grants existed. The caller checks the grant's key again before it connects.
   */
  redeemTicket(ticket: string): ServeGrant | null {
    return this.storage.redeemTicket(ticket);
  }

  /**
   * A serve key's `serves` changed: its live sessions take only the listed keys' requests from now
   * on, and the requests waiting on them that they may no longer take move to a session that may (or
   * fail as no longer servable there). The running ones finish.
   */
  regrant(keyId: string, serves: string[] | null): void {
    this.storage.recordChange(keyId, { revoked: false, serves });
    for (const sessionId of this.registry.regrant(keyId, serves)) this.relays.regranted(sessionId, { keyId, serves });
  }

  /** A serve key was revoked: the sessions it connected are closed (4403) and get no more requests. */
  closeSessionsOf(keyId: string): void {
    // A session that connects later with its grant (a ticket it got before, or a grant read just
    // before the revocation) is refused at connect, saying why (403 invalid_serve_key).
    this.storage.recordChange(keyId, { revoked: true });
    this.registry.revoke(keyId);
  }

  /** The client left (or the attempt was abandoned): a queued request disappears, a running one is interrupted. */
  cancel(id: string): void {
    if (!this.holds.cancel(id)) this.relays.cancel(id);
  }

  /** Live sessions, for the page's stats and for tests. */
  sessions(): Array<{ sessionId: string; models: string[]; running: number; queued: number; serveKey: string | null; serves: string[] | null }> {
    return this.registry.live().map((s) => {
      const grant = s.grant ?? SERVES_EVERYONE;
      return { sessionId: s.sessionId, models: s.models, ...this.relays.counts(s.sessionId), serveKey: grant.keyId, serves: grant.serves };
    });
  }

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/connect") {
      const res = this.acceptSession(request, url);
      if (res.status === 101) await this.scheduleSilenceCheck();
      return res;
    }
    if (url.pathname === "/relay" && request.method === "POST") return this.relay((await request.json()) as RelayStart);
    return json(404, { status: 404, code: "not_found", message: "unknown hub path" });
  }

  private acceptSession(request: Request, url: URL): Response {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return json(426, { status: 426, code: "upgrade_required", message: "GET /v1/sessions is a WebSocket endpoint: connect with a WebSocket client." });
    }
    if (url.searchParams.get("verified") !== "1") return json(401, { status: 401, code: "missing_credential", message: "A serve credential is required." });
    // The Worker checked the credential (or the ticket and its key) and says what it grants
    // (src/routes/sessions.ts); what the admin did to that key since it was read still applies.
    const grant = this.storage.grantAtConnect(parseGrant(request.headers.get(GRANT_HEADER)));
    if (!grant) return json(403, { status: 403, code: "invalid_serve_key", message: "The serve key this session would connect with was revoked." });
    return new Response(null, { status: 101, webSocket: this.registry.accept(grant) });
  }

  private async relay(start: RelayStart): Promise<Response> {
    let opened = this.relays.open(start);
    // Every session that could take it said the model is not loaded: when the earliest of them is
    // asked again within HOLD_MAX_MS, the request waits here for that, or for a session announcing
    // the model (a page that loaded it), whichever is first; a later one is the answer now.
    const holdEnd = !opened.ok && opened.loadingUntil !== undefined && opened.loadingUntil - Date.now() <= HOLD_MAX_MS ? opened.loadingUntil : undefined;
    while (holdEnd !== undefined && !opened.ok && opened.loadingUntil !== undefined) {
      const left = holdEnd - Date.now();
      if (left <= 0) break;
      if (!(await this.holds.hold(start.id, left))) return json(499, { status: 499, code: "client_closed_request", message: "The client closed the request." });
      opened = this.relays.open(start);
    }
    if (!opened.ok) return json(opened.refusal.status, opened.refusal.body);
    return new Response(opened.body, { headers: { "content-type": "application/x-ndjson", "x-switchyard-session": opened.sessionId } });
  }

  override async webSocketMessage(ws: WebSocket, raw: string | ArrayBuffer): Promise<void> {
    const session = this.registry.sessionOf(ws);
    if (!session) return;
    const action = readPageMessage(raw, session, Date.now());
    if (action.kind === "refuse") {
      return this.registry.close(ws, action.code, action.reason.slice(0, 120), `broke the relay protocol (${action.reason})`);
    }
    if (action.kind === "reply") {
      this.registry.update(ws, action.session);
      ws.send(action.reply);
      // A hello: requests held for a model no session had loaded look again.
      if (action.session.ready && !session.ready) this.holds.announced();
      return;
    }
    this.relays.answer(session, action.message, action.raw);
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    // Complete the closing handshake, or the page waits for its close event until a timeout.
    this.registry.close(ws, code === 1005 || code === 1006 ? 1000 : code, "closed", `disconnected (close code ${code})`);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.registry.gone(ws, "disconnected (socket error)");
  }

  /** The silence check: close the sessions that stopped pinging, then wake again for the next one. */
  override async alarm(): Promise<void> {
    this.registry.live();
    await this.scheduleSilenceCheck();
  }

  /** The alarm goes off at the earliest silence deadline of the open sockets (none open: no alarm). */
  private async scheduleSilenceCheck(): Promise<void> {
    const next = this.registry.nextSilence();
    const current = await this.ctx.storage.getAlarm();
    if (next === Infinity) {
      if (current !== null) await this.ctx.storage.deleteAlarm();
    } else if (current !== next) await this.ctx.storage.setAlarm(next);
  }
}

function json(status: number, body: Record<string, unknown>): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}
