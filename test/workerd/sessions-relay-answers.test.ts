// What a session client's answer becomes for the HTTP client, for the message sequences the protocol
// allows (docs/relay-protocol.md §2 "What an answer gives"): `done` without a finish chunk, `done`
// with no chunks at all, and `done.usage` next to web-llm's usage chunk. Stream and non-stream must
// agree: both carry finish_reason and x_switchyard.
import { describe, expect, it } from "vitest";
import { FakeSession, type Msg } from "../fakes/fake-session.ts";
import { call, configWith, readSse, text } from "./harness.ts";

const TOKEN = "serve-secret-for-answer-tests";
let n = 0;
const uniqueModel = () => `Answers-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f32_1-MLC`;
const browserOnly = (model: string) => ({ ...configWith({ m: { targets: [{ kind: "browser", model }] } }, { timeouts: { commitMs: 300, heartbeatMs: 100 } }), SERVE_TOKEN: TOKEN });

async function serving(model: string) {
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: `Bearer ${TOKEN}` } }, { SERVE_TOKEN: TOKEN });
  const s = new FakeSession(res.webSocket!, { auto: false });
  await s.hello([model]);
  return s;
}

const content = (model: string, text: string) => ({ id: "u", model, object: "chat.completion.chunk", created: 1, choices: [{ index: 0, delta: { role: "assistant", content: text }, finish_reason: null, logprobs: null }] });
const finishChunk = (model: string, reason: string) => ({ id: "u", model, object: "chat.completion.chunk", created: 1, choices: [{ index: 0, delta: {}, finish_reason: reason }] });
const usageChunk = (model: string, prompt: number, completion: number) => ({ id: "u", model, object: "chat.completion.chunk", created: 1, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } });

/** One request answered by `script` (the page's messages for it), asked once streaming and once not. */
async function both(script: (model: string, id: string) => Msg[]) {
  const model = uniqueModel();
  const s = await serving(model);
  const out: { stream?: Awaited<ReturnType<typeof readSse>>; body?: any } = {};
  for (const [i, stream] of [true, false].entries()) {
    const pending = call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "hi" }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) } }, browserOnly(model));
    await s.next(() => s.inbox.filter((m) => m.type === "request").length > i);
    const req = s.inbox.filter((m) => m.type === "request")[i]!;
    for (const msg of script(model, req.id)) s.send(msg);
    const { res } = await pending;
    expect(res.status).toBe(200);
    if (stream) out.stream = await readSse(res);
    else out.body = await res.json();
  }
  s.ws.close();
  return out as { stream: Awaited<ReturnType<typeof readSse>>; body: any };
}

const finishFrame = (frames: Array<Record<string, any>>) => frames.find((f) => f.choices?.[0]?.finish_reason);

describe("done without a finish chunk means the generation ended normally", () => {
  it("stream and non-stream both end with finish_reason stop and x_switchyard", async () => {
    const { stream, body } = await both((model, id) => [
      { type: "chunk", id, data: content(model, "No finish chunk.") },
      { type: "done", id, usage: null },
    ]);
    expect(text(stream.frames)).toBe("No finish chunk.");
    expect(stream.done).toBe(true);
    const fin = finishFrame(stream.frames);
    expect(fin?.choices[0].finish_reason).toBe("stop");
    expect(fin?.x_switchyard?.target).toMatch(/^browser:/);
    expect(body.choices[0]).toMatchObject({ message: { content: "No finish chunk." }, finish_reason: "stop" });
    expect(body.x_switchyard.target).toMatch(/^browser:/);
  });

  it("done with no chunks at all is an empty answer that finished with stop", async () => {
    const { stream, body } = await both((_model, id) => [{ type: "done", id }]);
    expect(text(stream.frames)).toBe("");
    expect(stream.done).toBe(true);
    expect(finishFrame(stream.frames)?.choices[0].finish_reason).toBe("stop");
    expect(body.choices[0]).toMatchObject({ message: { role: "assistant", content: "" }, finish_reason: "stop" });
  });
});

describe("usage: web-llm's usage chunk wins over done.usage, which counts when no chunk carried usage", () => {
  it("both present and different: the usage chunk's numbers", async () => {
    const { stream, body } = await both((model, id) => [
      { type: "chunk", id, data: content(model, "Counted.") },
      { type: "chunk", id, data: finishChunk(model, "stop") },
      { type: "chunk", id, data: usageChunk(model, 11, 3) },
      { type: "done", id, usage: { prompt_tokens: 99, completion_tokens: 99 } },
    ]);
    expect(stream.frames.at(-1)!.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
    expect(body.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
  });

  it("only done.usage: its numbers", async () => {
    const { stream, body } = await both((model, id) => [
      { type: "chunk", id, data: content(model, "Counted at done.") },
      { type: "done", id, usage: { prompt_tokens: 7, completion_tokens: 4 } },
    ]);
    expect(finishFrame(stream.frames)?.choices[0].finish_reason).toBe("stop");
    expect(stream.frames.at(-1)!.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 });
    expect(body.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 });
  });
});
