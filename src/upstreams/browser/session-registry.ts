// The hub's sessions and their sockets: one WebSocket per serving page, accepted with the Hibernation
// API, its Session in the socket's attachment. Accepting, finding, messaging and closing sessions;
// their liveness (closing the silent ones, when the next goes silent); a serve key's sessions when the
// admin changes or revokes it. What happens to a session's requests when it goes is the caller's
// (`onGone`, relays-in-flight.ts).
import { CLOSE } from "../../schemas/relay.ts";
import { randomHex } from "../../lib/ids.ts";
import type { ServeGrant } from "./serve-grant.ts";
import { SESSION_ID_BYTES, type Session } from "./session.ts";
import { SILENT_CLOSE, silentDeadline } from "./session-liveness.ts";

/** What the registry uses of the Durable Object's state. */
export type HubSockets = Pick<DurableObjectState, "acceptWebSocket" | "getWebSockets" | "getWebSocketAutoResponseTimestamp">;

interface Open {
  ws: WebSocket;
  session: Session;
}

export class SessionRegistry {
  constructor(
    private readonly ctx: HubSockets,
    /** A session is going (closed, broken, silent, revoked): called before its socket is closed. */
    private readonly onGone: (session: Session, why: string) => void,
  ) {}

  /** A new session holding `grant`: its socket accepted (tagged with its id); returns the page's end. */
  accept(grant: ServeGrant, now = Date.now()): WebSocket {
    const pair = new WebSocketPair();
    const server = pair[1];
    const session: Session = { sessionId: randomHex("s_", SESSION_ID_BYTES), connectedAt: now, models: [], ready: false, grant };
    this.ctx.acceptWebSocket(server, [session.sessionId]);
    server.serializeAttachment(session);
    return pair[0];
  }

  sessionOf(ws: WebSocket): Session | null {
    return ws.deserializeAttachment() as Session | null;
  }

  update(ws: WebSocket, session: Session): void {
    ws.serializeAttachment(session);
  }

  /** Sessions on open sockets, silent ones included (nothing is closed). */
  open(): Session[] {
    return this.openSockets().map((o) => o.session);
  }

  /** Sessions whose silence deadline has not passed; the silent ones are closed here (SILENT_CLOSE). */
  live(now = Date.now()): Session[] {
    const live: Session[] = [];
    for (const { ws, session } of this.openSockets()) {
      if (now >= this.deadline(ws, session)) this.close(ws, SILENT_CLOSE.code, SILENT_CLOSE.reason, "stopped sending pings");
      else live.push(session);
    }
    return live;
  }

  /** The earliest silence deadline of the open sockets (Infinity: none open). */
  nextSilence(): number {
    let next = Infinity;
    for (const { ws, session } of this.openSockets()) next = Math.min(next, this.deadline(ws, session));
    return next;
  }

  /** Sends `text` to a session; false when it has no socket or the send failed. */
  send(sessionId: string, text: string): boolean {
    const ws = this.ctx.getWebSockets(sessionId)[0];
    if (!ws) return false;
    try {
      ws.send(text);
      return true;
    } catch {
      return false;
    }
  }

  /** A session's socket closed or broke: its session is gone (`why`, for its requests). */
  gone(ws: WebSocket, why: string): void {
    const session = this.sessionOf(ws);
    if (session) this.onGone(session, why);
  }

  /** Ends a session: gone first (`why`), then its socket closed with `code`. */
  close(ws: WebSocket, code: number, reason: string, why: string): void {
    this.gone(ws, why);
    try {
      ws.close(code, reason);
    } catch {}
  }

  /** A serve key's `serves` changed: its open sessions hold the new grant. Returns their ids. */
  regrant(keyId: string, serves: string[] | null): string[] {
    const affected: string[] = [];
    for (const { ws, session } of this.openSockets()) {
      if (session.grant?.keyId !== keyId) continue;
      ws.serializeAttachment({ ...session, grant: { keyId, serves } });
      affected.push(session.sessionId);
    }
    return affected;
  }

  /** A serve key was revoked: the open sessions it connected are closed (4403). */
  revoke(keyId: string): void {
    for (const { ws, session } of this.openSockets()) {
      if (session.grant?.keyId === keyId) this.close(ws, CLOSE.revoked, "serve key revoked", "was closed: its serve key was revoked");
    }
  }

  private openSockets(): Open[] {
    const open: Open[] = [];
    for (const ws of this.ctx.getWebSockets()) {
      const session = ws.deserializeAttachment() as Session | null;
      if (session && ws.readyState === WebSocket.OPEN) open.push({ ws, session });
    }
    return open;
  }

  private deadline(ws: WebSocket, session: Session): number {
    return silentDeadline(session.connectedAt, session.pingedAt, this.ctx.getWebSocketAutoResponseTimestamp(ws)?.getTime());
  }
}
