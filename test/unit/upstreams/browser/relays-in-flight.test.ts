import { describe, expect, it, vi } from "vitest";
import type { AnswerMessage } from "../../../../src/upstreams/browser/page-protocol.ts";
import { RelaysInFlight, type RelaySessions } from "../../../../src/upstreams/browser/relays-in-flight.ts";
import type { RelayStart } from "../../../../src/upstreams/browser/relay-dispatch.ts";
import type { Session } from "../../../../src/upstreams/browser/session.ts";

const M = "m";
const session = (sessionId: string, extra: Partial<Session> = {}): Session => ({ sessionId, connectedAt: 0, models: [M], ready: true, ...extra });

/** Sessions as plain values, and what each page was sent. */
function pages(...sessions: Session[]) {
  const list = [...sessions];
  const inbox = new Map<string, Array<Record<string, unknown>>>();
  const port: RelaySessions = {
    live: () => list,
    open: () => list,
    send: (id, text) => {
      if (!list.some((s) => s.sessionId === id)) return false;
      inbox.set(id, [...(inbox.get(id) ?? []), JSON.parse(text) as Record<string, unknown>]);
      return true;
    },
  };
  const sent = (id: string, type?: string) => (inbox.get(id) ?? []).filter((m) => type === undefined || m.type === type);
  const remove = (id: string) => list.splice(list.findIndex((s) => s.sessionId === id), 1);
  return { relays: new RelaysInFlight(port), sent, remove, list };
}

const start = (id: string, extra: Partial<RelayStart> = {}): RelayStart => ({ id, model: M, body: { messages: [{ role: "user", content: "hi" }] }, ...extra });
function opened(r: ReturnType<RelaysInFlight["open"]>) {
  if (!r.ok) throw new Error(`refused: ${JSON.stringify(r.refusal)}`);
  return r;
}
const lines = async (body: ReadableStream<Uint8Array>) => (await new Response(body).text()).split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
const answer = (relays: RelaysInFlight, s: Session, msg: AnswerMessage) => relays.answer(s, msg, JSON.stringify(msg));
const chunk = (id: string, content: string, usage?: unknown): AnswerMessage => ({ type: "chunk", id, data: { object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }], ...(usage ? { usage } : {}) } });

describe("relays in flight", () => {
  it("one running per session and model: the next waits (the page hears the queue) and starts when the first is done", async () => {
    const s1 = session("s1");
    const { relays, sent } = pages(s1);
    const a = opened(relays.open(start("a")));
    const b = opened(relays.open(start("b")));
    expect(sent("s1", "request").map((m) => m.id)).toEqual(["a"]);
    expect(sent("s1", "queue").at(-1)).toEqual({ type: "queue", model: M, waiting: 1 });
    answer(relays, s1, chunk("a", "Hello"));
    answer(relays, s1, { type: "done", id: "a" });
    expect(sent("s1", "request").map((m) => m.id)).toEqual(["a", "b"]);
    expect((await lines(a.body)).map((l) => l.type)).toEqual(["chunk", "done"]);
    expect(relays.counts("s1")).toEqual({ running: 1, queued: 0 });
    answer(relays, s1, { type: "error", id: "b", kind: "Error", message: "boom" });
    expect(await lines(b.body)).toEqual([{ type: "error", id: "b", kind: "Error", message: "boom" }]);
    expect(relays.counts("s1")).toEqual({ running: 0, queued: 0 });
  });

  it("answers from another session, or for a request not running, are ignored", async () => {
    const s1 = session("s1");
    const s2 = session("s2");
    const { relays } = pages(s1, s2);
    const a = opened(relays.open(start("a")));
    answer(relays, s2, { type: "done", id: "a" });
    expect(relays.counts("s1")).toEqual({ running: 1, queued: 0 });
    answer(relays, s1, { type: "done", id: "a" });
    answer(relays, s1, chunk("a", "late"));
    expect((await lines(a.body)).map((l) => l.type)).toEqual(["done"]);
  });

  it("cancel: a waiting request disappears at once; a running one is interrupted and holds its slot until the page drains it", async () => {
    const s1 = session("s1");
    const { relays, sent } = pages(s1);
    opened(relays.open(start("a")));
    const b = opened(relays.open(start("b")));
    relays.cancel("b");
    expect(await lines(b.body)).toEqual([]);
    expect(sent("s1", "queue").at(-1)).toEqual({ type: "queue", model: M, waiting: 0 });
    expect(sent("s1", "cancel")).toEqual([]);
    opened(relays.open(start("c")));
    relays.cancel("a");
    expect(sent("s1", "cancel")).toEqual([{ type: "cancel", id: "a" }]);
    expect(sent("s1", "request").map((m) => m.id)).toEqual(["a"]);
    answer(relays, s1, { type: "done", id: "a" });
    expect(sent("s1", "request").map((m) => m.id)).toEqual(["a", "c"]);
  });

  it("a session gone: its running request ends with SessionLost, its waiting one moves to another session", async () => {
    const s1 = session("s1");
    const { relays, sent, remove, list } = pages(s1);
    const a = opened(relays.open(start("a")));
    const b = opened(relays.open(start("b")));
    list.push(session("s2"));
    remove("s1");
    relays.sessionGone("s1", "disconnected (close code 1001)");
    expect(await lines(a.body)).toEqual([{ type: "error", id: "a", kind: "SessionLost", message: "The browser session disconnected (close code 1001)." }]);
    expect(sent("s2", "request").map((m) => m.id)).toEqual(["b"]);
    answer(relays, list[0]!, { type: "done", id: "b" });
    expect((await lines(b.body)).map((l) => l.type)).toEqual(["done"]);
  });

  it("a regrant: waiting requests the session may no longer take move (or fail); the running one finishes", async () => {
    const grant = { keyId: "serve_1", serves: ["key_a", "key_b"] };
    const s1 = session("s1", { grant });
    const { relays, sent } = pages(s1);
    opened(relays.open(start("a", { keyId: "key_b" })));
    const b = opened(relays.open(start("b", { keyId: "key_b" })));
    const c = opened(relays.open(start("c", { keyId: "key_a" })));
    relays.regranted("s1", { keyId: "serve_1", serves: ["key_a"] });
    expect(await lines(b.body)).toEqual([{ type: "error", id: "b", kind: "SessionLost", message: "The browser session may no longer serve this request (its serve key's serves changed)." }]);
    expect(sent("s1", "queue").at(-1)).toEqual({ type: "queue", model: M, waiting: 1 });
    expect(relays.counts("s1")).toEqual({ running: 1, queued: 1 });
    relays.cancel("c");
    expect(await lines(c.body)).toEqual([]);
  });

  it("usage outside what the request allows is replaced by Switchyard's count, and the page told once", async () => {
    const s1 = session("s1");
    const { relays, sent } = pages(s1);
    const a = opened(relays.open(start("a", { body: { messages: [{ role: "user", content: "hi" }], max_tokens: 10 } })));
    answer(relays, s1, chunk("a", "Hello", { prompt_tokens: 5, completion_tokens: 1_000_000 }));
    answer(relays, s1, { type: "done", id: "a", usage: { prompt_tokens: 5, completion_tokens: 1_000_000 } });
    const [c, d] = await lines(a.body);
    expect((c!.data as { usage: Record<string, number> }).usage.completion_tokens).toBeLessThanOrEqual(10);
    expect((d!.usage as Record<string, number>).completion_tokens).toBeLessThanOrEqual(10);
    expect(sent("s1", "notice")).toHaveLength(1);
    expect(sent("s1", "notice")[0]).toMatchObject({ id: "a", code: "usage_rejected" });
  });

  it("refused: the placement's refusal, and nothing queued", () => {
    const { relays, sent } = pages();
    const r = relays.open(start("a"));
    expect(r.ok ? null : r.refusal.status).toBe(503);
    expect(sent("s1")).toEqual([]);
  });

  it("a page that says the model is not loaded is benched for it: the request ends saying when it is asked again, the one waiting behind it moves or ends without the page hearing of it", async () => {
    const s1 = session("s1");
    const s2 = session("s2", { models: ["other"] });
    const { relays, sent } = pages(s1, s2);
    const a = opened(relays.open(start("a")));
    const b = opened(relays.open(start("b")));
    answer(relays, s1, { type: "error", id: "a", kind: "ModelNotLoadedError", message: "Model not loaded" });
    expect(await lines(a.body)).toEqual([{ type: "error", id: "a", kind: "ModelNotLoadedError", message: "Model not loaded", retryAfter: 1 }]);
    expect(await lines(b.body)).toEqual([{ type: "error", id: "b", kind: "ModelNotLoadedError", message: "Model not loaded", retryAfter: 1 }]);
    expect(sent("s1", "request").map((m) => m.id)).toEqual(["a"]);
    // While benched the session gets none of the model's requests: refused, saying until when.
    const c = relays.open(start("c"));
    expect(c).toMatchObject({ ok: false, refusal: { status: 503, body: { code: "model_loading", retryAfter: 1 } } });
    expect(c.ok ? undefined : c.loadingUntil).toBeGreaterThan(Date.now());
    expect(sent("s1", "request").map((m) => m.id)).toEqual(["a"]);
  });

  it("a request waiting behind one the page said it has not loaded moves to another session that serves the model", async () => {
    const s1 = session("s1");
    const s2 = session("s2");
    const { relays, sent } = pages(s1, s2);
    opened(relays.open(start("a")));
    opened(relays.open(start("x")));
    opened(relays.open(start("y")));
    opened(relays.open(start("b")));
    expect(sent("s1", "request").map((m) => m.id)).toEqual(["a"]);
    expect(sent("s2", "request").map((m) => m.id)).toEqual(["x"]);
    // a and y on s1 (y waiting), x and b on s2 (b waiting).
    answer(relays, s1, { type: "error", id: "a", kind: "ModelNotLoadedError", message: "Model not loaded" });
    expect(relays.counts("s1")).toEqual({ running: 0, queued: 0 });
    expect(relays.counts("s2")).toEqual({ running: 1, queued: 2 });
    expect(sent("s1", "request").map((m) => m.id)).toEqual(["a"]);
  });

  it("an error line is passed on as the protocol reads it, not as the page wrote it (a retryAfter of its own is dropped)", async () => {
    const s1 = session("s1");
    const { relays } = pages(s1);
    const a = opened(relays.open(start("a")));
    relays.answer(s1, { type: "error", id: "a", kind: "NetworkError", message: "offline" }, JSON.stringify({ type: "error", id: "a", kind: "NetworkError", message: "offline", retryAfter: 99999 }));
    expect(await lines(a.body)).toEqual([{ type: "error", id: "a", kind: "NetworkError", message: "offline" }]);
  });

  it("the Web Worker engine's WorkerEngineModelNotLoadedError benches the session the same way", async () => {
    const s1 = session("s1");
    const { relays } = pages(s1);
    const a = opened(relays.open(start("a")));
    answer(relays, s1, { type: "error", id: "a", kind: "WorkerEngineModelNotLoadedError", message: "WebWorkerMLCEngine is not loaded with a model." });
    expect((await lines(a.body))[0]).toMatchObject({ kind: "WorkerEngineModelNotLoadedError", retryAfter: 1 });
    expect(relays.open(start("b"))).toMatchObject({ ok: false, refusal: { body: { code: "model_loading" } } });
  });

  it("a session that serves the model again starts its bench afresh: the next 'not loaded' benches it 1 s, not 2", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const s1 = session("s1");
      const { relays } = pages(s1);
      const notLoaded = async (id: string) => {
        const r = opened(relays.open(start(id)));
        answer(relays, s1, { type: "error", id, kind: "ModelNotLoadedError", message: "not loaded" });
        return (await lines(r.body))[0]!.retryAfter;
      };
      expect(await notLoaded("a")).toBe(1);
      vi.advanceTimersByTime(1000);
      expect(await notLoaded("b")).toBe(2);
      vi.advanceTimersByTime(2000);
      const c = opened(relays.open(start("c")));
      answer(relays, s1, { type: "done", id: "c" });
      await lines(c.body);
      expect(await notLoaded("d")).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
