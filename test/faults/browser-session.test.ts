import { describe, expect, it } from "vitest";
import { FakeSession } from "../fakes/fake-session.ts";
import { call } from "../workerd/harness.ts";
import { FAST, chat, fixture, llama, outcome, sleep } from "./fault-harness.ts";

// A browser session (a serving page) that vanishes: before its first token the request fails over
// to the next target; after it the answer ends with an error (frame or envelope), never a silent end.
const TOKEN = "serve-secret-for-fault-tests";
let n = 0;
const uniqueModel = () => `Vanish-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f32_1-MLC`;

async function serving(model: string): Promise<FakeSession> {
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: `Bearer ${TOKEN}` } }, { SERVE_TOKEN: TOKEN });
  expect(res.status).toBe(101);
  const s = new FakeSession(res.webSocket!, { auto: false });
  await s.hello([model]);
  return s;
}

const cfg = (targets: unknown[]) => ({ SWITCHYARD_CONFIG: JSON.stringify({ models: { m: { targets } }, timeouts: FAST }), SERVE_TOKEN: TOKEN });
const chunk = (content: string) => ({ id: "x", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content }, finish_reason: null, logprobs: null }] });

describe.each([true, false])("a browser session that vanishes (stream: %s)", (stream) => {
  it("before its first token: the next target answers", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const pending = chat({ stream, vars: cfg([{ kind: "browser", model }, llama(fixture("behave/say/the%20server%20took%20over"))]) });
    await s.next((m) => m.type === "request");
    s.ws.close(1001, "tab closed");
    const { res, started } = await pending;
    const got = await outcome(res, started);
    expect(got).toMatchObject({ status: 200, text: "the server took over", attempts: "2" });
  });

  it("mid-answer: an error after the text already sent", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const pending = chat({ stream, vars: cfg([{ kind: "browser", model }]) });
    const req = await s.next((m) => m.type === "request");
    s.send({ type: "chunk", id: req.id, data: chunk("Half") });
    await sleep(50);
    s.ws.close(1001, "tab closed");
    const { res, started } = await pending;
    const got = await outcome(res, started);
    if (stream) expect(got).toMatchObject({ status: 200, text: "Half", done: false, finish: [], code: "upstream_error" });
    else expect(got).toMatchObject({ status: 502, code: "upstream_error" });
    expect(got.elapsed).toBeLessThan(2000);
  });
});
