import { DurableObject } from "cloudflare:workers";
import {
  CLOSE,
  MAX_MESSAGE_BYTES,
  USAGE_REJECTED,
  PING_INTERVAL_MS,
  PING_TEXT,
  PONG_TEXT,
  RELAY_VERSION,
  messageBytes,
  parsePageMessage,
  type Endpoint,
  type Hello,
  type PageMessage,
} from "../../schemas/relay.ts";
import { contextLengthMessage } from "../../errors/context-length.ts";
import { randomHex } from "../../lib/ids.ts";
import { MAX_QUEUE_PER_MODEL, RelayQueue } from "./relay-queue.ts";
import { applyServeKeyChange, GRANT_HEADER, mayServe, parseGrant, readGrant, SERVES_EVERYONE, type ServeGrant, type ServeKeyChange } from "./serve-grant.ts";
import { SILENT_CLOSE, silentDeadline } from "./session-liveness.ts";
import { checkRelayUsage, newTally, tallyChunk, type RelayTally } from "./relay-usage.ts";

/** How long a ticket from `POST /v1/sessions/ticket` stays valid. */
export const TICKET_TTL_MS = 60_000;
/** Random bytes in a session id (`s_` + 32 hex digits). */
export const SESSION_ID_BYTES = 16;
/** How long the page has to finish a cancelled generation (interrupt, then drain) before its slot is freed anyway. */
const CANCEL_GRACE_MS = 30_000;

/** Per-socket state, kept in the socket's attachment so it survives hibernation. */
interface SessionAttachment {
  sessionId: string;
  connectedAt: number;
  /** Set by `hello`: the models it serves. Until then the socket serves nothing. */
  models: string[];
  ready: boolean;
  /** A ping the hub answered itself (not the exact text the runtime answers and stamps). */
  pingedAt?: number;
  agent?: string;
  capabilities?: Hello["capabilities"];
  /** Who connected it and whose requests it takes (absent on sockets accepted before grants existed: everyone's). */
  grant?: ServeGrant;
}

/** A relayed request. Lives only in memory: an in-flight request keeps the object from hibernating. */
interface Relay {
  id: string;
  sessionId: string;
  model: string;
  endpoint: Endpoint;
  text: string;
  state: "queued" | "running";
  cancelled: boolean;
  out: ReadableStreamDefaultController<Uint8Array>;
  closed: boolean;
  timer?: ReturnType<typeof setTimeout>;
  prompt?: string;
  /** The id of the key the request was made with; absent: a request without a key. */
  keyId?: string;
  /** What was asked and what the page has answered so far: the bounds of the usage it may report. */
  tally: RelayTally;
  /** The page was told its usage was replaced (once per request). */
  told?: boolean;
}

export interface RelayStart {
  id: string;
  model: string;
  /** Absent = chat. */
  endpoint?: Endpoint;
  body: Record<string, unknown>;
  /** The prompt's hashes at each message boundary (chat), so the request goes where an engine holds its conversation. */
  prompt?: string[];
  /** Who is asking: the id of the request's key (never the key); absent for a request without one. Only sessions whose grant admits it are candidates. */
  keyId?: string;
  /** The prompt's tokens at least (a low estimate from its size): sessions whose model's window is smaller are not candidates. */
  promptTokens?: number;
}

/**
 * Whether a session serves `endpoint` with `model`: embedding models (announced in
 * `capabilities.embeddingModels`) serve only embeddings; the others serve chat, and completions when
 * the page announced `capabilities.completions`. Pages that announce nothing serve chat only.
 */
export function sessionServes(att: Pick<SessionAttachment, "models" | "capabilities">, model: string, endpoint: Endpoint): boolean {
  if (!att.models.includes(model)) return false;
  const embedding = Array.isArray(att.capabilities?.embeddingModels) && att.capabilities.embeddingModels.includes(model);
  if (endpoint === "embeddings") return embedding;
  if (embedding) return false;
  return endpoint === "chat" || att.capabilities?.completions === true;
}

const encoder = new TextEncoder();

/**
 * Browser sessions and the relay (docs/relay-protocol.md). One instance ("hub") holds every serving
 * page's WebSocket (Hibernation API), issues one-use tickets, queues relayed requests per session and
 * model (web-llm runs one generation per model at a time and its interrupt is engine-wide), and streams
 * each request's page messages back to the Worker as JSON lines. An alarm closes sessions that stopped
 * pinging at the moment they go silent, whether or not a request comes (alarms wake a hibernating
 * object; the pings themselves never do).
 */
export class SessionHub extends DurableObject<Env> {
  private readonly relays = new RelayQueue<Relay>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Pings are answered without waking the object; their time is the session's liveness.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING_TEXT, PONG_TEXT));
    const sql = ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS tickets (ticket TEXT PRIMARY KEY, expires INTEGER NOT NULL, serve_grant TEXT)");
    // Tickets stored before grants existed: the column is added; such a ticket admits nobody's requests.
    if (!sql.exec("SELECT * FROM tickets LIMIT 0").columnNames.includes("serve_grant")) sql.exec("ALTER TABLE tickets ADD COLUMN serve_grant TEXT");
    // The last word of the admin on each serve key (revoked, or its serves): applied at every connect.
    sql.exec("CREATE TABLE IF NOT EXISTS serve_keys (key_id TEXT PRIMARY KEY, revoked INTEGER NOT NULL, serves TEXT)");
  }

  /**
   * A one-use ticket for `GET /v1/sessions?ticket=…` (the caller has checked the serve credential);
   * the session it opens holds `grant`.
   */
  issueTicket(grant: ServeGrant): { ticket: string; expiresInMs: number } {
    const now = Date.now();
    this.ctx.storage.sql.exec("DELETE FROM tickets WHERE expires < ?", now);
    const ticket = randomHex("tk_", 24);
    this.ctx.storage.sql.exec("INSERT INTO tickets (ticket, expires, serve_grant) VALUES (?, ?, ?)", ticket, now + TICKET_TTL_MS, JSON.stringify(grant));
    return { ticket, expiresInMs: TICKET_TTL_MS };
  }

  /**
   * Uses up a ticket: the grant it was issued with, or null for a ticket that is unknown, used,
   * expired or from before grants existed. The caller checks the grant's key again before it connects.
   */
  redeemTicket(ticket: string): ServeGrant | null {
    const row = this.ctx.storage.sql.exec<{ expires: number; serve_grant: string | null }>("DELETE FROM tickets WHERE ticket = ? RETURNING expires, serve_grant", ticket).toArray()[0];
    if (!row || row.expires < Date.now()) return null;
    return readGrant(row.serve_grant);
  }

  /**
   * A serve key's `serves` changed: its live sessions take only the listed keys' requests from now
   * on, and the requests waiting on them that they may no longer take move to a session that may (or
   * fail as no longer servable there). The running ones finish.
   */
  regrant(keyId: string, serves: string[] | null): void {
    this.recordChange(keyId, { revoked: false, serves });
    const affected: string[] = [];
    for (const { ws, att } of this.openSockets()) {
      if (att.grant?.keyId !== keyId) continue;
      ws.serializeAttachment({ ...att, grant: { keyId, serves } });
      affected.push(att.sessionId);
    }
    const grant = { keyId, serves };
    for (const sessionId of affected) {
      const leaving = this.relays.all().filter((r) => r.sessionId === sessionId && r.state === "queued" && !mayServe(grant, r.keyId));
      this.rehome(leaving, sessionId, "may no longer serve this request (its serve key's serves changed)");
      // The session stays: it hears that its queues got shorter.
      for (const model of new Set(leaving.map((r) => r.model))) this.sendQueue(sessionId, model);
    }
  }

  /** A serve key was revoked: the sessions it connected are closed (4403) and get no more requests. */
  closeSessionsOf(keyId: string): void {
    // A session that connects later with its grant (a ticket it got before, or a grant read just
    // before the revocation) is refused at connect, saying why (403 invalid_serve_key).
    this.recordChange(keyId, { revoked: true });
    for (const { ws, att } of this.openSockets()) {
      if (att.grant?.keyId !== keyId) continue;
      this.dropSession(ws, "was closed: its serve key was revoked");
      try {
        ws.close(CLOSE.revoked, "serve key revoked");
      } catch {}
    }
  }

  /** The client left (or the attempt was abandoned): a queued request disappears, a running one is interrupted. */
  cancel(id: string): void {
    const r = this.relays.get(id);
    if (!r) return;
    if (r.state === "queued") {
      this.finish(r);
      this.sendQueue(r.sessionId, r.model);
      return;
    }
    if (r.cancelled) return;
    r.cancelled = true;
    this.closeOut(r);
    this.send(r.sessionId, JSON.stringify({ type: "cancel", id }));
    // The slot stays taken until the page reports the drained generation as done or failed.
    r.timer = setTimeout(() => this.release(r), CANCEL_GRACE_MS);
  }

  /** Live sessions, for the page's stats and for tests. */
  sessions(): Array<{ sessionId: string; models: string[]; running: number; queued: number; serveKey: string | null; serves: string[] | null }> {
    return this.liveSockets().map(({ att }) => {
      const grant = att.grant ?? SERVES_EVERYONE;
      return { sessionId: att.sessionId, models: att.models, ...this.relays.counts(att.sessionId), serveKey: grant.keyId, serves: grant.serves };
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
    const sent = parseGrant(request.headers.get(GRANT_HEADER));
    const grant = applyServeKeyChange(sent, sent.keyId === null ? undefined : this.changeOf(sent.keyId));
    if (!grant) return json(403, { status: 403, code: "invalid_serve_key", message: "The serve key this session would connect with was revoked." });
    const pair = new WebSocketPair();
    const server = pair[1];
    // 128 random bits: a session id names a socket in stats and headers; it must not be guessable.
    const att: SessionAttachment = { sessionId: randomHex("s_", SESSION_ID_BYTES), connectedAt: Date.now(), models: [], ready: false, grant };
    this.ctx.acceptWebSocket(server, [att.sessionId]);
    server.serializeAttachment(att);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  private recordChange(keyId: string, change: ServeKeyChange): void {
    const serves = change.revoked ? null : JSON.stringify(change.serves);
    // A revocation is final: a later change of serves does not undo it.
    this.ctx.storage.sql.exec(
      "INSERT INTO serve_keys (key_id, revoked, serves) VALUES (?, ?, ?) ON CONFLICT (key_id) DO UPDATE SET revoked = MAX(revoked, excluded.revoked), serves = excluded.serves",
      keyId,
      change.revoked ? 1 : 0,
      serves,
    );
  }

  private changeOf(keyId: string): ServeKeyChange | undefined {
    const row = this.ctx.storage.sql.exec<{ revoked: number; serves: string | null }>("SELECT revoked, serves FROM serve_keys WHERE key_id = ?", keyId).toArray()[0];
    if (!row) return undefined;
    if (row.revoked) return { revoked: true };
    // Written by recordChange: the JSON of `serves` (null: every key's requests, or an array of key ids).
    return { revoked: false, serves: JSON.parse(row.serves ?? "null") as string[] | null };
  }

  private relay(start: RelayStart): Response {
    const endpoint: Endpoint = start.endpoint ?? "chat";
    // Chat requests keep the version-1 message exactly (no `endpoint`), for pages that predate it.
    const text = JSON.stringify(endpoint === "chat" ? { type: "request", id: start.id, body: start.body } : { type: "request", id: start.id, endpoint, body: start.body });
    if (messageBytes(text) > MAX_MESSAGE_BYTES) {
      return json(413, { status: 413, code: "request_too_large", retryable: true, message: `The request is larger than a browser session accepts (${MAX_MESSAGE_BYTES} bytes per relay message).` });
    }
    const live = this.liveSockets().filter(({ att }) => att.ready);
    const serving = live.filter(({ att }) => sessionServes(att, start.model, endpoint));
    // Only sessions whose serve key admits the asking key: as if the others did not exist.
    const admitted = serving.filter(({ att }) => mayServe(att.grant, start.keyId));
    // Only sessions whose model's context window (announced in hello) can hold the prompt.
    const windowOf = (att: SessionAttachment) => att.capabilities?.contextWindows?.[start.model];
    const candidates = admitted.filter(({ att }) => start.promptTokens === undefined || (windowOf(att) ?? Infinity) > start.promptTokens);
    if (candidates.length === 0 && admitted.length > 0) {
      const largest = Math.max(...admitted.map(({ att }) => windowOf(att) ?? 0));
      // `unable`: skipped, not tried; a target with a larger context may take it.
      return json(400, { status: 400, code: "context_length_exceeded", param: "messages", unable: true, message: contextLengthMessage(start.promptTokens!, largest) });
    }
    if (candidates.length === 0 && serving.length > 0) {
      return json(503, {
        status: 503,
        code: "no_capacity",
        retryAfter: 5,
        ...(endpoint === "chat" ? {} : { unable: true }),
        message: `No browser session serving ${start.model} may serve this request: the sessions serving it take only other keys' requests (their serve key's serves list).`,
      });
    }
    if (candidates.length === 0) {
      if (endpoint !== "chat" && live.some(({ att }) => att.models.includes(start.model))) {
        // `unable`: sessions have the model but none serves this endpoint with it (skipped, not tried).
        return json(503, { status: 503, code: "no_capacity", retryAfter: 5, unable: true, message: `No browser session serving ${start.model} can serve /v1/${endpoint} with it${endpoint === "embeddings" ? " (web-llm serves embeddings only with its embedding models)" : ""}.` });
      }
      return json(503, { status: 503, code: "no_capacity", retryAfter: 5, ...(endpoint === "chat" ? {} : { unable: true }), message: `No browser session is serving ${start.model}. Open the Switchyard page, load the model and switch on "serve this model for the team".` });
    }
    const chain = endpoint === "chat" && Array.isArray(start.prompt) ? start.prompt : undefined;
    const best = this.relays.place(candidates.map(({ att }) => att.sessionId), start.model, chain);
    if (!best || !RelayQueue.fits(best.load)) {
      return json(503, {
        status: 503,
        code: "no_capacity",
        retryAfter: 2,
        busy: true,
        message: `Every browser session serving ${start.model} is busy (${candidates.length} session(s), each with one running and ${MAX_QUEUE_PER_MODEL} waiting). Retry shortly.`,
      });
    }
    const sessionId = best.sessionId;
    let out!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        out = c;
      },
      cancel: () => this.cancel(start.id),
    });
    const r: Relay = {
      id: start.id,
      sessionId,
      model: start.model,
      endpoint,
      text,
      state: "queued",
      cancelled: false,
      out,
      closed: false,
      ...(chain?.length ? { prompt: chain.at(-1)! } : {}),
      ...(start.keyId !== undefined ? { keyId: start.keyId } : {}),
      tally: newTally(endpoint, text, start.body),
    };
    this.relays.add(r);
    this.startNext(sessionId, start.model);
    if (r.state === "queued") this.sendQueue(sessionId, start.model);
    return new Response(body, { headers: { "content-type": "application/x-ndjson", "x-switchyard-session": sessionId } });
  }

  override async webSocketMessage(ws: WebSocket, raw: string | ArrayBuffer): Promise<void> {
    if (typeof raw !== "string") return this.refuse(ws, CLOSE.malformed, "binary messages are not part of the protocol");
    const parsed = parsePageMessage(raw);
    if (!parsed.ok) return this.refuse(ws, parsed.tooBig ? CLOSE.tooBig : CLOSE.malformed, parsed.problem);
    const msg: PageMessage = parsed.message;
    const att = ws.deserializeAttachment() as SessionAttachment;
    if (msg.type === "ping") {
      ws.serializeAttachment({ ...att, pingedAt: Date.now() });
      ws.send(PONG_TEXT);
      return;
    }
    if (msg.type === "hello") {
      if (att.ready) return this.refuse(ws, CLOSE.malformed, "hello was already sent on this socket");
      if (msg.version !== RELAY_VERSION) return this.refuse(ws, CLOSE.unsupportedVersion, `unsupported version ${msg.version}; this hub speaks ${RELAY_VERSION}`);
      const next: SessionAttachment = { ...att, ready: true, models: msg.models, ...(msg.agent ? { agent: msg.agent } : {}), ...(msg.capabilities ? { capabilities: msg.capabilities } : {}) };
      ws.serializeAttachment(next);
      ws.send(JSON.stringify({ type: "welcome", version: RELAY_VERSION, sessionId: att.sessionId, maxMessageBytes: MAX_MESSAGE_BYTES, pingIntervalMs: PING_INTERVAL_MS }));
      return;
    }
    if (!att.ready) return this.refuse(ws, CLOSE.malformed, `${msg.type} before hello`);
    const r = this.relays.get(msg.id);
    // Late messages for a request that is gone (finished, failed, cancelled and released) are ignored.
    if (!r || r.sessionId !== att.sessionId || r.state !== "running") return;
    if (msg.type === "chunk") {
      const data = msg.data as Record<string, unknown>;
      if (r.endpoint !== "embeddings") tallyChunk(r.tally, data);
      this.write(r, data.usage === undefined ? raw : this.checkedUsage(r, data.usage, (usage) => ({ ...msg, data: { ...data, usage } }), raw));
      return;
    }
    this.write(r, msg.type === "done" && msg.usage ? this.checkedUsage(r, msg.usage, (usage) => ({ ...msg, usage }), raw) : raw);
    this.release(r);
  }

  /**
   * The line to pass on for a page message carrying `usage`: as sent when the usage is within what
   * the request allows, else rebuilt with Switchyard's own count (`rebuild`), and the page told why.
   */
  private checkedUsage(r: Relay, usage: unknown, rebuild: (usage: Record<string, unknown>) => object, raw: string): string {
    const socket = this.ctx.getWebSockets(r.sessionId)[0];
    const att = socket?.deserializeAttachment() as SessionAttachment | null | undefined;
    const check = checkRelayUsage(usage, r.tally, att?.capabilities?.contextWindows?.[r.model]);
    if (check.ok) return raw;
    if (!r.told) {
      r.told = true;
      const message = `${check.problem}. Switchyard counted this request itself (${String(check.usage.prompt_tokens)} prompt and ${String(check.usage.completion_tokens ?? 0)} completion tokens): send web-llm's usage unchanged.`;
      console.warn(`[relay] session ${r.sessionId}, request ${r.id}: ${message}`);
      this.send(r.sessionId, JSON.stringify({ type: "notice", id: r.id, code: USAGE_REJECTED, message }));
    }
    return JSON.stringify(rebuild(check.usage));
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    this.dropSession(ws, `disconnected (close code ${code})`);
    // Complete the closing handshake, or the page waits for its close event until a timeout.
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
    } catch {}
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    this.dropSession(ws, "disconnected (socket error)");
  }

  /** The silence check: close the sessions that stopped pinging, then wake again for the next one. */
  override async alarm(): Promise<void> {
    this.liveSockets();
    await this.scheduleSilenceCheck();
  }

  /** Open sockets whose silence deadline has not passed; the others are closed here (SILENT_CLOSE). */
  private liveSockets(): Array<{ ws: WebSocket; att: SessionAttachment }> {
    const now = Date.now();
    const live: Array<{ ws: WebSocket; att: SessionAttachment }> = [];
    for (const { ws, att } of this.openSockets()) {
      if (now >= this.deadline(ws, att)) {
        this.dropSession(ws, "stopped sending pings");
        try {
          ws.close(SILENT_CLOSE.code, SILENT_CLOSE.reason);
        } catch {}
        continue;
      }
      live.push({ ws, att });
    }
    return live;
  }

  private openSockets(): Array<{ ws: WebSocket; att: SessionAttachment }> {
    const open: Array<{ ws: WebSocket; att: SessionAttachment }> = [];
    for (const ws of this.ctx.getWebSockets()) {
      const att = ws.deserializeAttachment() as SessionAttachment | null;
      if (att && ws.readyState === WebSocket.OPEN) open.push({ ws, att });
    }
    return open;
  }

  private deadline(ws: WebSocket, att: SessionAttachment): number {
    return silentDeadline(att.connectedAt, att.pingedAt, this.ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime());
  }

  /** The alarm goes off at the earliest silence deadline of the open sockets (none open: no alarm). */
  private async scheduleSilenceCheck(): Promise<void> {
    let next = Infinity;
    for (const { ws, att } of this.openSockets()) next = Math.min(next, this.deadline(ws, att));
    const current = await this.ctx.storage.getAlarm();
    if (next === Infinity) {
      if (current !== null) await this.ctx.storage.deleteAlarm();
    } else if (current !== next) await this.ctx.storage.setAlarm(next);
  }

  private startNext(sessionId: string, model: string): void {
    const next = this.relays.startNext(sessionId, model);
    if (!next) return;
    if (!this.send(sessionId, next.text)) {
      this.write(next, JSON.stringify({ type: "error", id: next.id, kind: "SessionLost", message: "The browser session disconnected before the request could be sent." }));
      this.finish(next);
      return;
    }
    this.sendQueue(sessionId, model);
  }

  /** The page is done with a running request (answered, failed, or drained after a cancel): start the next. */
  private release(r: Relay): void {
    if (!this.relays.has(r.id)) return;
    this.finish(r);
    this.startNext(r.sessionId, r.model);
  }

  private finish(r: Relay): void {
    if (r.timer !== undefined) clearTimeout(r.timer);
    this.relays.delete(r.id);
    this.closeOut(r);
  }

  private write(r: Relay, line: string): void {
    if (r.closed) return;
    try {
      r.out.enqueue(encoder.encode(`${line}\n`));
    } catch {
      r.closed = true;
    }
  }

  private closeOut(r: Relay): void {
    if (r.closed) return;
    r.closed = true;
    try {
      r.out.close();
    } catch {}
  }

  private send(sessionId: string, text: string): boolean {
    const ws = this.ctx.getWebSockets(sessionId)[0];
    if (!ws) return false;
    try {
      ws.send(text);
      return true;
    } catch {
      return false;
    }
  }

  private sendQueue(sessionId: string, model: string): void {
    this.send(sessionId, JSON.stringify({ type: "queue", model, waiting: this.relays.waiting(sessionId, model) }));
  }

  /**
   * A session is gone: its running requests end with an error; waiting ones (the page never saw them)
   * move to another live session with the model, or end with an error if there is none.
   */
  private dropSession(ws: WebSocket, why: string): void {
    const att = ws.deserializeAttachment() as SessionAttachment | null;
    if (!att) return;
    this.relays.forget(att.sessionId);
    this.rehome(this.relays.all().filter((r) => r.sessionId === att.sessionId), att.sessionId, why);
  }

  /**
   * Requests leaving `from`: waiting ones (the page never saw them) move to another live session that
   * serves them and may take them; the rest end with an error saying `why`.
   */
  private rehome(relays: Relay[], from: string, why: string): void {
    const moved = new Set<string>();
    for (const r of relays) {
      const other = r.state === "queued" ? this.leastBusy(r, from) : undefined;
      if (other) {
        r.sessionId = other.sessionId;
        moved.add(`${other.sessionId}\n${r.model}`);
        continue;
      }
      this.write(r, JSON.stringify({ type: "error", id: r.id, kind: "SessionLost", message: `The browser session ${why}.` }));
      this.finish(r);
    }
    for (const key of moved) {
      const [sessionId, model] = key.split("\n") as [string, string];
      this.startNext(sessionId, model);
      this.sendQueue(sessionId, model);
    }
  }

  private leastBusy(r: Relay, except: string): { sessionId: string; load: number } | undefined {
    const serving: string[] = [];
    for (const ws of this.ctx.getWebSockets()) {
      const att = ws.deserializeAttachment() as SessionAttachment | null;
      if (!att || att.sessionId === except || !att.ready || ws.readyState !== WebSocket.OPEN || !sessionServes(att, r.model, r.endpoint) || !mayServe(att.grant, r.keyId)) continue;
      serving.push(att.sessionId);
    }
    return this.relays.leastLoaded(serving, r.model);
  }

  private refuse(ws: WebSocket, code: number, reason: string): void {
    this.dropSession(ws, `broke the relay protocol (${reason})`);
    try {
      ws.close(code, reason.slice(0, 120));
    } catch {}
  }
}

function json(status: number, body: Record<string, unknown>): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}
