import { describe, expect, it } from "vitest";
// @ts-expect-error: plain JS module without types
import { FakeEngine } from "../fakes/fake-web-llm.mjs";
import { FakeSession } from "../fakes/fake-session.ts";
import { call, configWith, readSse } from "./harness.ts";

// /v1/completions and /v1/embeddings answered by a browser session through the hub (relay protocol
// `request.endpoint`, hello `capabilities.completions` / `capabilities.embeddingModels`).

const TOKEN = "serve-secret-for-tests";
let n = 0;
const uniqueModel = (kind = "Fake") => `${kind}-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f32_1-MLC`;
// A long commit grace: the tests read who served from the x-switchyard-target header, which a response
// committed before the session's first token (a loaded machine) could not carry yet.
const vars = (models: Record<string, unknown>) => ({ ...configWith(models, { timeouts: { commitMs: 3000, heartbeatMs: 100 } }), SERVE_TOKEN: TOKEN });
const browserOnly = (model: string) => vars({ m: { targets: [{ kind: "browser", model }] } });

async function serving(models: string[], capabilities: Record<string, unknown>, engine?: unknown) {
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: `Bearer ${TOKEN}` } }, { SERVE_TOKEN: TOKEN });
  expect(res.status).toBe(101);
  const s = new FakeSession(res.webSocket!, engine ? { engine } : {});
  await s.hello(models, 1, capabilities);
  return s;
}

/** An engine whose app config lists `model` as an embedding model (ModelType.embedding = 1). */
const embeddingEngine = (model: string) => new FakeEngine({ tokenDelayMs: 2, appConfig: { model_list: [{ model_id: model, model_type: 1 }] } });

describe("/v1/completions on a browser session", () => {
  it("streams text_completion chunks as OpenAI text completions, with usage", async () => {
    const model = uniqueModel();
    const s = await serving([model], { completions: true });
    const { res } = await call("/v1/completions", { json: { model: "m", prompt: "echo: Once upon a time", stream: true, stream_options: { include_usage: true }, max_tokens: 16 } }, browserOnly(model));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-target")).toBe(`browser:${model}`);
    const sse = await readSse(res);
    expect(sse.done).toBe(true);
    const textFrames = sse.frames.filter((f) => f.choices?.length);
    expect(textFrames.map((f) => f.choices[0].text).join("")).toBe("Once upon a time");
    for (const f of sse.frames) expect(f.object).toBe("text_completion");
    expect(textFrames.at(-1)!.choices[0].finish_reason).toBe("stop");
    const usage = sse.frames.find((f) => f.usage)?.usage;
    expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });
    const req = s.inbox.find((m) => m.type === "request")!;
    expect(req.endpoint).toBe("completions");
    expect(req.body).toMatchObject({ prompt: "echo: Once upon a time", model, stream: true, stream_options: { include_usage: true }, max_tokens: 16 });
    expect(req.body.messages).toBeUndefined();
    s.ws.close();
  });

  it("non-stream: one text_completion with finish_reason and usage; `user` is dropped (web-llm rejects it)", async () => {
    const model = uniqueModel();
    const s = await serving([model], { completions: true });
    const { res } = await call("/v1/completions", { json: { model: "m", prompt: ["echo: one two three"], max_tokens: 2, user: "u1" } }, browserOnly(model));
    expect(res.status).toBe(200);
    const body = await res.json<any>();
    expect(body.object).toBe("text_completion");
    expect(body.choices[0]).toMatchObject({ text: "one two", finish_reason: "length", index: 0 });
    expect(body.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 2 });
    const req = s.inbox.find((m) => m.type === "request")!;
    expect(req.body.user).toBeUndefined();
    expect(req.body.prompt).toBe("echo: one two three");
    s.ws.close();
  });

  it("a client that leaves a completions stream interrupts it in the page; chat and completions for the model queue behind each other", async () => {
    const model = uniqueModel();
    const s = await serving([model], { completions: true }, new FakeEngine({ tokenDelayMs: 40 }));
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ");
    const first = await call("/v1/completions", { json: { model: "m", prompt: `echo: ${words}`, stream: true } }, browserOnly(model));
    const second = call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "echo: after the cancel" }] } }, browserOnly(model));
    const reader = first.res.body!.getReader();
    await reader.read();
    await reader.cancel();
    const cancel = await s.next((m) => m.type === "cancel");
    expect(cancel.id).toBe(s.inbox.find((m) => m.type === "request")!.id);
    const { res } = await second;
    expect((await res.json<any>()).choices[0].message.content).toBe("after the cancel");
    expect(s.maxRunning).toBe(1);
    s.ws.close();
  });

  it("a session that did not announce completions is not sent one (503 no_capacity), and still serves chat", async () => {
    const model = uniqueModel();
    const s = await serving([model], {});
    const { res } = await call("/v1/completions", { json: { model: "m", prompt: "hi" } }, browserOnly(model));
    expect(res.status).toBe(503);
    expect((await res.json<any>()).error.code).toBe("no_capacity");
    expect(s.inbox.some((m) => m.type === "request")).toBe(false);
    const chat = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "echo: still chat" }] } }, browserOnly(model));
    expect(chat.res.status).toBe(200);
    expect((await chat.res.json<any>()).choices[0].message.content).toBe("still chat");
    s.ws.close();
  });
});

describe("/v1/embeddings on a browser session", () => {
  it("embeddings go to the least-busy session with the embedding model, never to a session that has the id as a chat model", async () => {
    const model = uniqueModel("snowflake-arctic-embed-s");
    const a = await serving([model], { embeddingModels: [model] }, embeddingEngine(model));
    a.engine.tokenDelayMs = 300;
    const first = call("/v1/embeddings", { json: { model: "m", input: "one" } }, browserOnly(model));
    await a.next((m) => m.type === "request");
    const b = await serving([model], { embeddingModels: [model] }, embeddingEngine(model));
    // a is busy with the first one: the second goes to the idle b, not to the chat-only session.
    const chatOnly = await serving([model], { completions: true });
    expect(chatOnly.inbox.some((m) => m.type === "request")).toBe(false);
    const second = await call("/v1/embeddings", { json: { model: "m", input: "two" } }, browserOnly(model));
    expect(second.res.status).toBe(200);
    expect(b.inbox.some((m) => m.type === "request")).toBe(true);
    expect(chatOnly.inbox.some((m) => m.type === "request")).toBe(false);
    expect((await first).res.status).toBe(200);
    a.ws.close();
    b.ws.close();
    chatOnly.ws.close();
  });

  it("a session with an embedding model answers with web-llm's list (one chunk, then done)", async () => {
    const model = uniqueModel("snowflake-arctic-embed-s");
    const s = await serving([model], { embeddingModels: [model] }, embeddingEngine(model));
    const { res } = await call("/v1/embeddings", { json: { model: "m", input: ["hello world", "second text"], encoding_format: "float" } }, browserOnly(model));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-target")).toBe(`browser:${model}`);
    expect(res.headers.get("x-switchyard-attempts")).toBe("1");
    const body = await res.json<any>();
    expect(body.object).toBe("list");
    expect(body.model).toBe("m");
    expect(body.data).toHaveLength(2);
    expect(body.data[0]).toMatchObject({ index: 0, object: "embedding" });
    expect(body.data[0].embedding).toHaveLength(384);
    expect(body.data[1].index).toBe(1);
    expect(body.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    const req = s.inbox.find((m) => m.type === "request")!;
    expect(req.endpoint).toBe("embeddings");
    expect(req.body).toEqual({ model, input: ["hello world", "second text"] });
    s.ws.close();
  });

  it("a web-llm error from the page becomes the mapped client error (empty input → 400)", async () => {
    const model = uniqueModel("snowflake-arctic-embed-s");
    const s = await serving([model], { embeddingModels: [model] }, embeddingEngine(model));
    const { res } = await call("/v1/embeddings", { json: { model: "m", input: ["ok", ""] } }, browserOnly(model));
    expect(res.status).toBe(400);
    expect((await res.json<any>()).error.message).toContain("EmbeddingInputEmptyError");
    s.ws.close();
  });

  it("a session with only chat models is skipped (no attempt counted), and its embedding model serves no chat", async () => {
    const model = uniqueModel();
    const s = await serving([model], { completions: true });
    const { res } = await call("/v1/embeddings", { json: { model: "m", input: "hello" } }, browserOnly(model));
    expect(res.status).toBe(503);
    expect(res.headers.get("x-switchyard-attempts")).toBe("0");
    const err = (await res.json<any>()).error;
    expect(err.code).toBe("no_capacity");
    expect(err.message).toContain("embedding model");
    expect(s.inbox.some((m) => m.type === "request")).toBe(false);
    s.ws.close();

    const embed = uniqueModel("snowflake-arctic-embed-s");
    const e = await serving([embed], { embeddingModels: [embed] }, embeddingEngine(embed));
    const chat = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "hi" }] } }, browserOnly(embed));
    expect(chat.res.status).toBe(503);
    expect(e.inbox.some((m) => m.type === "request")).toBe(false);
    e.ws.close();
  });
});
