import { describe, expect, it } from "vitest";
import { CLOSE } from "../../../../src/schemas/relay.ts";
import { SessionRegistry, type HubSockets } from "../../../../src/upstreams/browser/session-registry.ts";
import { SILENCE_LIMIT_MS, SILENT_CLOSE } from "../../../../src/upstreams/browser/session-liveness.ts";
import type { Session } from "../../../../src/upstreams/browser/session.ts";

/** A hibernatable socket as the registry uses it: an attachment, a state, sends and a close. */
class FakeSocket {
  readyState: number = WebSocket.OPEN;
  sent: string[] = [];
  closed: { code: number; reason: string } | null = null;
  failSends = false;
  private attachment: unknown = null;
  constructor(readonly tags: string[]) {}
  serializeAttachment(a: unknown) {
    this.attachment = structuredClone(a);
  }
  deserializeAttachment() {
    return structuredClone(this.attachment);
  }
  send(text: string) {
    if (this.failSends || this.readyState !== WebSocket.OPEN) throw new Error("not open");
    this.sent.push(text);
  }
  close(code: number, reason: string) {
    this.closed = { code, reason };
    this.readyState = WebSocket.CLOSED;
  }
}

/** The Durable Object's socket calls over a list of fake sockets; `pongs` the runtime's auto-response stamps. */
function hub() {
  const sockets: FakeSocket[] = [];
  const pongs = new Map<FakeSocket, number>();
  const gone: Array<[string, string]> = [];
  const ctx = {
    acceptWebSocket: (ws: WebSocket, tags: string[] = []) => sockets.push(Object.assign(ws, { tags }) as unknown as FakeSocket),
    getWebSockets: (tag?: string) => sockets.filter((s) => tag === undefined || s.tags.includes(tag)) as unknown as WebSocket[],
    getWebSocketAutoResponseTimestamp: (ws: WebSocket) => {
      const t = pongs.get(ws as unknown as FakeSocket);
      return t === undefined ? null : new Date(t);
    },
  } as unknown as HubSockets;
  const registry = new SessionRegistry(ctx, (s, why) => gone.push([s.sessionId, why]));
  const add = (sessionId: string, extra: Partial<Session> = {}) => {
    const ws = new FakeSocket([sessionId]);
    ws.serializeAttachment({ sessionId, connectedAt: 0, models: ["m"], ready: true, ...extra } satisfies Session);
    sockets.push(ws);
    return ws;
  };
  return { registry, add, pongs, gone, sockets };
}

describe("the session registry", () => {
  it("accepts a socket tagged with a fresh 128-bit session id, holding its grant, not ready before hello", () => {
    const { registry, sockets } = hub();
    registry.accept({ keyId: "serve_1", serves: ["key_a"] }, 1000);
    registry.accept({ keyId: null, serves: null }, 1000);
    const [a, b] = sockets.map((s) => s.tags[0]);
    expect(a).toMatch(/^s_[0-9a-f]{32}$/);
    expect(b).not.toBe(a);
    expect(registry.open()[0]).toEqual({ sessionId: a, connectedAt: 1000, models: [], ready: false, grant: { keyId: "serve_1", serves: ["key_a"] } });
  });

  it("closes the sessions silent past their deadline (last of connect, own ping, runtime's pong), their requests told first", () => {
    const { registry, add, pongs, gone } = hub();
    const now = 100_000;
    const silent = add("silent", { connectedAt: now - SILENCE_LIMIT_MS });
    const pinged = add("pinged", { connectedAt: 0, pingedAt: now - SILENCE_LIMIT_MS + 1 });
    const ponged = add("ponged", { connectedAt: 0 });
    pongs.set(ponged, now - 10);
    expect(registry.live(now).map((s) => s.sessionId)).toEqual(["pinged", "ponged"]);
    expect(silent.closed).toEqual(SILENT_CLOSE);
    expect(gone).toEqual([["silent", "stopped sending pings"]]);
    expect(pinged.closed).toBeNull();
    // The next check: the earliest deadline of the sockets still open.
    expect(registry.nextSilence()).toBe(now - SILENCE_LIMIT_MS + 1 + SILENCE_LIMIT_MS);
  });

  it("no open socket: no next check; closed sockets are not sessions", () => {
    const { registry, add } = hub();
    expect(registry.nextSilence()).toBe(Infinity);
    add("a").readyState = WebSocket.CLOSED;
    expect(registry.open()).toEqual([]);
    expect(registry.nextSilence()).toBe(Infinity);
  });

  it("regrant rewrites the grant of that serve key's open sessions only, and says which", () => {
    const { registry, add } = hub();
    add("a", { grant: { keyId: "serve_1", serves: ["key_a"] } });
    add("b", { grant: { keyId: "serve_2", serves: ["key_a"] } });
    add("c", { grant: { keyId: "serve_1", serves: null } });
    add("d");
    expect(registry.regrant("serve_1", ["key_b"])).toEqual(["a", "c"]);
    const grants = Object.fromEntries(registry.open().map((s) => [s.sessionId, s.grant]));
    expect(grants).toEqual({ a: { keyId: "serve_1", serves: ["key_b"] }, b: { keyId: "serve_2", serves: ["key_a"] }, c: { keyId: "serve_1", serves: ["key_b"] }, d: undefined });
  });

  it("revoke closes that serve key's sessions with 4403, their requests told first; the others stay", () => {
    const { registry, add, gone } = hub();
    const a = add("a", { grant: { keyId: "serve_1", serves: null } });
    const b = add("b", { grant: { keyId: "serve_2", serves: null } });
    const token = add("token", { grant: { keyId: null, serves: null } });
    registry.revoke("serve_1");
    expect(a.closed).toEqual({ code: CLOSE.revoked, reason: "serve key revoked" });
    expect(gone).toEqual([["a", "was closed: its serve key was revoked"]]);
    expect([b.closed, token.closed]).toEqual([null, null]);
    expect(registry.open().map((s) => s.sessionId)).toEqual(["b", "token"]);
  });

  it("sends to a session by its id; false when it has no socket or the send fails", () => {
    const { registry, add } = hub();
    const a = add("a");
    expect(registry.send("a", "hi")).toBe(true);
    expect(a.sent).toEqual(["hi"]);
    expect(registry.send("nobody", "hi")).toBe(false);
    a.failSends = true;
    expect(registry.send("a", "hi")).toBe(false);
  });
});
