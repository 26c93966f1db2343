// The facts of docs/relay-protocol.md a session client written from it relies on, each as the hub
// behaves: a ping before hello, what a malformed chunk or an over-long error message does (and the
// close reason that says what to fix), when `queue` messages come, and a request too big to relay.
import { describe, expect, it } from "vitest";
import { FakeSession } from "../fakes/fake-session.ts";
import { call, configWith } from "./harness.ts";

const TOKEN = "serve-secret-for-protocol-tests";
let n = 0;
const uniqueModel = () => `Protocol-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f32_1-MLC`;
const browserOnly = (model: string) => ({ ...configWith({ m: { targets: [{ kind: "browser", model }] } }, { timeouts: { commitMs: 300, heartbeatMs: 100 } }), SERVE_TOKEN: TOKEN });
const ask = (content: string) => ({ model: "m", messages: [{ role: "user", content }], stream: true });

async function connect(opts: ConstructorParameters<typeof FakeSession>[1] = {}) {
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: `Bearer ${TOKEN}` } }, { SERVE_TOKEN: TOKEN });
  expect(res.status).toBe(101);
  return new FakeSession(res.webSocket!, opts);
}

describe("before hello", () => {
  it("a ping is allowed: the exact text and any other valid ping are answered, and hello still works", async () => {
    const s = await connect();
    s.send('{"type":"ping"}');
    await s.next((m) => m.type === "pong");
    s.send('{ "type": "ping", "seq": 1 }');
    await s.next(() => s.inbox.filter((m) => m.type === "pong").length === 2);
    expect(s.closed).toBeNull();
    expect((await s.hello([uniqueModel()])).type).toBe("welcome");
    s.ws.close();
  });
});

describe("malformed messages close the socket with 4422 and a reason that names the field", () => {
  it("a chunk without object: the reason says what object must be; its request fails with 502", async () => {
    const model = uniqueModel();
    const s = await connect({ auto: false });
    await s.hello([model]);
    const pending = call("/v1/chat/completions", { json: ask("hi") }, browserOnly(model));
    const req = await s.next((m) => m.type === "request");
    s.send({ type: "chunk", id: req.id, data: { choices: [{ index: 0, delta: { content: "x" } }] } });
    const closed = await s.waitClosed();
    expect(closed).toEqual({ code: 4422, reason: 'data.object must be one of "chat.completion.chunk", "text_completion"' });
    const { res } = await pending;
    expect(res.status).toBe(502);
    expect((await res.json<any>()).error.message).toContain("broke the relay protocol (data.object must be one of");
  });

  it("an error message over 4,000 characters (truncate it) closes the socket", async () => {
    const model = uniqueModel();
    const s = await connect({ auto: false });
    await s.hello([model]);
    const pending = call("/v1/chat/completions", { json: ask("hi") }, browserOnly(model));
    const req = await s.next((m) => m.type === "request");
    s.send({ type: "error", id: req.id, kind: "Error", message: "x".repeat(4001) });
    expect(await s.waitClosed()).toEqual({ code: 4422, reason: "message must be at most 4000 characters" });
    expect((await pending).res.status).toBe(502);
  });

  it("an unknown type: the reason lists the types", async () => {
    const s = await connect();
    await s.hello([uniqueModel()]);
    s.send({ type: "mystery" });
    expect((await s.waitClosed())?.reason).toBe('type must be one of "hello", "chunk", "done", "error", "ping"');
  });
});

describe("queue messages", () => {
  it("follow every request sent and every change of the number waiting (the running one never counts)", async () => {
    const model = uniqueModel();
    const s = await connect({ auto: false });
    await s.hello([model]);
    const first = call("/v1/chat/completions", { json: ask("echo: one") }, browserOnly(model));
    const a = await s.next((m) => m.type === "request");
    await s.next((m) => m.type === "queue");
    const second = call("/v1/chat/completions", { json: ask("echo: two") }, browserOnly(model));
    await s.next((m) => m.type === "queue" && m.waiting === 1);
    await s.answer(a);
    const b = await s.next((m) => m.type === "request" && m.id !== a.id);
    await s.next(() => s.inbox.filter((m) => m.type === "queue").length === 3);
    await s.answer(b);
    const seen = s.inbox.filter((m) => m.type === "request" || m.type === "queue");
    expect(seen.map((m) => (m.type === "queue" ? `queue ${m.waiting}` : "request"))).toEqual(["request", "queue 0", "queue 1", "request", "queue 0"]);
    expect(seen.filter((m) => m.type === "queue").every((m) => m.model === model)).toBe(true);
    await Promise.all([first, second].map(async (p) => (await p).res.text()));
    s.ws.close();
  });
});

describe("a request too big for one relay message", () => {
  it("is refused with 413 request_too_large before it reaches a session", async () => {
    const model = uniqueModel();
    const s = await connect();
    await s.hello([model]);
    const { res } = await call("/v1/chat/completions", { json: ask("x".repeat(1024 * 1024 + 10)) }, browserOnly(model));
    expect(res.status).toBe(413);
    expect((await res.json<any>()).error.code).toBe("request_too_large");
    expect(s.inbox.some((m) => m.type === "request")).toBe(false);
    s.ws.close();
  });
});
