import { describe, expect, it } from "vitest";
import { adaptForWebLlm } from "../../src/upstreams/browser/adapt-for-web-llm.ts";
import { mapWebLlmError, webLlmErrorGroup } from "../../src/upstreams/browser/map-web-llm-error.ts";
import { normalizeWebLlmChunk } from "../../src/upstreams/browser/normalize-web-llm-chunk.ts";
import { floatsAsBase64 } from "../../src/upstreams/browser/browser-embeddings.ts";
import { parseHubMessage, parsePageMessage } from "../../src/schemas/relay.ts";
// @ts-expect-error: plain JS module without types
import { FakeEngine } from "../fakes/fake-web-llm.mjs";

const U = "browser:M";

async function chunksOf(body: Record<string, unknown>, engine = new FakeEngine()) {
  engine.loaded ??= "M";
  const out: any[] = [];
  for await (const c of await engine.chat.completions.create(body)) out.push(c);
  return out;
}

describe("web-llm 0.2.86's chunk sequence, normalized", () => {
  it("role on every chunk and empty content carry nothing; the finish and usage chunks become finish and usage", async () => {
    const chunks = await chunksOf({ model: "M", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "echo: a b" }] });
    expect(chunks[0].choices[0].delta).toEqual({ content: "", role: "assistant" });
    expect(chunks.at(-2).choices[0]).toEqual({ delta: {}, finish_reason: "stop", index: 0 });
    expect(chunks.at(-1).choices).toEqual([]);
    expect(chunks.some((c) => "usage" in c && c.choices.length)).toBe(false);
    const events = chunks.flatMap((c) => normalizeWebLlmChunk(c, U));
    expect(events.map((e) => e.type)).toEqual(["text", "text", "finish", "usage"]);
    const usage = events.at(-1) as any;
    expect(usage.usage).toEqual({ promptTokens: expect.any(Number), completionTokens: 2 });
    expect(Object.keys(usage.timings).sort()).toEqual(["predicted_ms", "predicted_n", "predicted_per_second", "prompt_ms", "prompt_n", "prompt_per_second"]);
  });

  it("logprobs asked for: the chunk's entries (web-llm sends its last token's) ride on the text event", () => {
    const entry = { token: "Hi", logprob: -0.25, bytes: [72, 105], top_logprobs: [{ token: "Ho", logprob: -1.5, bytes: [72, 111] }] };
    const events = normalizeWebLlmChunk({ choices: [{ delta: { content: "Hi", role: "assistant" }, finish_reason: null, index: 0, logprobs: { content: [entry] } }] } as never, U);
    expect(events).toEqual([{ type: "text", delta: "Hi", logprobs: [entry] }]);
    expect(normalizeWebLlmChunk({ choices: [{ delta: { content: "Hi", role: "assistant" }, finish_reason: null, index: 0, logprobs: null }] } as never, U)).toEqual([{ type: "text", delta: "Hi" }]);
    // engine.completions: the text is on the choice, the entries beside it as in chat.
    expect(normalizeWebLlmChunk({ object: "text_completion", choices: [{ text: "Hi", finish_reason: null, index: 0, logprobs: { content: [entry] } }] } as never, U)).toEqual([{ type: "text", delta: "Hi", logprobs: [entry] }]);
  });

  it("finish_reason abort (an interrupt) becomes an error, never a finish", () => {
    const events = normalizeWebLlmChunk({ choices: [{ delta: {}, finish_reason: "abort", index: 0 }] }, U);
    expect(events).toEqual([{ type: "error", error: expect.objectContaining({ code: "upstream_error", status: 502 }) }]);
  });

  it("NaN and Infinity rates in usage.extra are left out of timings", () => {
    const [e] = normalizeWebLlmChunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 0, extra: { prefill_tokens_per_s: Infinity, decode_tokens_per_s: NaN } } }, U) as any[];
    expect(e.timings).toEqual({ prompt_n: 3, predicted_n: 0 });
  });

  it("the fake engine interrupts engine-wide and clears the flag when the next request takes the lock", async () => {
    const engine = new FakeEngine({ tokenDelayMs: 5 });
    engine.loaded = "M";
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    const a = await engine.chat.completions.create({ stream: true, messages: [{ role: "user", content: `echo: ${words}` }] });
    const b = await engine.chat.completions.create({ stream: true, messages: [{ role: "user", content: "echo: next" }] });
    const seenA: any[] = [];
    for await (const c of a) {
      seenA.push(c);
      if (seenA.length === 3) engine.interruptGenerate();
    }
    expect(seenA.at(-1).choices[0].finish_reason).toBe("abort");
    const seenB: any[] = [];
    for await (const c of b) seenB.push(c);
    expect(seenB.at(-1).choices[0].finish_reason).toBe("stop");
  });
});

describe("web-llm error names → outcomes", () => {
  it.each([
    ["ContextWindowSizeExceededError", 400, "context_length_exceeded", false],
    ["MessageOrderError", 400, "upstream_error", false],
    ["InvalidResponseFormatGrammarError", 400, "upstream_error", false],
    ["WebGPUNotAvailableError", 503, "no_capacity", true],
    ["DeviceLostError", 503, "no_capacity", true],
    ["ModelNotFoundError", 503, "no_capacity", true],
    ["ModelNotLoadedError", 503, "model_loading", true],
    // The Web Worker engine's (the bundled page's) word for the same: no model loaded yet.
    ["WorkerEngineModelNotLoadedError", 503, "model_loading", true],
    ["SessionLost", 502, "upstream_error", true],
    ["SomethingNew", 502, "upstream_error", true],
  ])("%s → %i %s", (kind, status, code, retryable) => {
    const e = mapWebLlmError(kind, "msg", U);
    expect([e.status, e.code, e.retryable]).toEqual([status, code, retryable]);
  });

  it("a model not loaded: Retry-After is the hub's (when the session is asked again), else 5 s", () => {
    expect(mapWebLlmError("ModelNotLoadedError", "m", U, 2).retryAfter).toBe(2);
    expect(mapWebLlmError("ModelNotLoadedError", "m", U).retryAfter).toBe(5);
  });

  it("web-llm's plain Errors are recognised by their message", () => {
    expect(webLlmErrorGroup("Error", "Unable to find a compatible GPU. This issue might be because your computer doesn't have a GPU")).toBe("capability");
  });
});

describe("adaptation and the relay schemas", () => {
  it("keeps unknown fields, sets the loaded model, never sends n", () => {
    const body = adaptForWebLlm({ model: "team", messages: [{ role: "user", content: "hi" }], n: 1, seed: 3, repetition_penalty: 1.1 } as never, "M");
    expect(body).toMatchObject({ model: "M", seed: 3, repetition_penalty: 1.1, stream: true, stream_options: { include_usage: true } });
    expect("n" in body).toBe(false);
  });

  it("image parts are refused (retryable: another target may take them)", () => {
    expect(() => adaptForWebLlm({ model: "t", messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] } as never, "M")).toThrow(/text models only/);
  });

  it("validates both directions and measures size in UTF-8 bytes", () => {
    expect(parsePageMessage('{"type":"hello","version":1,"models":["M"]}').ok).toBe(true);
    expect(parsePageMessage('{"type":"hello","version":1,"models":[]}').ok).toBe(false);
    expect(parseHubMessage('{"type":"request","id":"r","body":{"messages":[],"stream":true}}').ok).toBe(true);
    const big = parsePageMessage(JSON.stringify({ type: "ping", pad: "é".repeat(600_000) }));
    expect(big).toMatchObject({ ok: false, tooBig: true });
  });
});

describe("completions and embeddings over the relay", () => {
  it("web-llm's text_completion chunks normalize to text, finish and usage like chat", async () => {
    const engine = new FakeEngine();
    engine.loaded = "M";
    const chunks: any[] = [];
    for await (const c of await engine.completions.create({ model: "M", prompt: "echo: a b", stream: true, stream_options: { include_usage: true } })) chunks.push(c);
    for (const c of chunks) expect(c.object).toBe("text_completion");
    expect(chunks.at(-2).choices[0]).toEqual({ text: "", finish_reason: "stop", index: 0 });
    expect(chunks.at(-1).choices).toEqual([]);
    const events = chunks.flatMap((c) => normalizeWebLlmChunk(c, U));
    expect(events.filter((e) => e.type === "text").map((e: any) => e.delta).join("")).toBe("a b");
    expect(events.find((e) => e.type === "finish")).toEqual({ type: "finish", reason: "stop" });
    expect(events.find((e) => e.type === "usage")).toMatchObject({ usage: { promptTokens: 3, completionTokens: 2 } });
    for (const c of chunks) expect(parsePageMessage(JSON.stringify({ type: "chunk", id: "r", data: c })).ok).toBe(true);
  });

  it("the fake engine refuses what web-llm refuses: embeddings on a chat model, chat and completions on an embedding model, unsupported fields", async () => {
    const chat = new FakeEngine();
    chat.loaded = "SmolLM2-360M-Instruct-q4f32_1-MLC";
    await expect(chat.embeddings.create({ input: "x" })).rejects.toMatchObject({ name: "IncorrectPipelineLoadedError" });
    await expect(chat.completions.create({ prompt: "x", stream: true, suffix: "y" })).rejects.toMatchObject({ name: "UnsupportedFieldsError" });
    const emb = new FakeEngine();
    emb.loaded = "snowflake-arctic-embed-s-q0f32-MLC-b4";
    await expect(emb.chat.completions.create({ messages: [{ role: "user", content: "x" }], stream: true })).rejects.toMatchObject({ name: "IncorrectPipelineLoadedError" });
    await expect(emb.completions.create({ prompt: "x", stream: true })).rejects.toMatchObject({ name: "IncorrectPipelineLoadedError" });
    await expect(emb.embeddings.create({ input: "x", dimensions: 8 })).rejects.toMatchObject({ name: "UnsupportedFieldsError" });
    await expect(emb.embeddings.create({ input: "x", encoding_format: "base64" })).rejects.toMatchObject({ name: "EmbeddingUnsupportedEncodingFormatError" });
    await expect(emb.embeddings.create({ input: [""] })).rejects.toMatchObject({ name: "EmbeddingInputEmptyError" });
    const list = await emb.embeddings.create({ input: [[1, 2, 3], [4]] });
    expect(list).toMatchObject({ object: "list", model: "snowflake-arctic-embed-s-q0f32-MLC-b4", usage: { prompt_tokens: 4, total_tokens: 4 } });
    expect(list.data.map((d: any) => [d.index, d.object, d.embedding.length])).toEqual([[0, "embedding", 384], [1, "embedding", 384]]);
    expect(parsePageMessage(JSON.stringify({ type: "chunk", id: "r", data: list })).ok).toBe(true);
    expect(mapWebLlmError("IncorrectPipelineLoadedError", "m", U).status).toBe(503);
    expect(mapWebLlmError("EmbeddingInputEmptyError", "m", U).status).toBe(400);
  });

  it("relay messages: request.endpoint is optional and checked; hello capabilities carry completions and embeddingModels", () => {
    expect(parseHubMessage('{"type":"request","id":"r","endpoint":"embeddings","body":{"input":"x"}}').ok).toBe(true);
    expect(parseHubMessage('{"type":"request","id":"r","endpoint":"images","body":{}}').ok).toBe(false);
    expect(parsePageMessage(JSON.stringify({ type: "hello", version: 1, models: ["E"], capabilities: { completions: false, embeddingModels: ["E"] } })).ok).toBe(true);
    expect(parsePageMessage(JSON.stringify({ type: "hello", version: 1, models: ["E"], capabilities: { embeddingModels: "E" } })).ok).toBe(false);
    expect(parsePageMessage(JSON.stringify({ type: "chunk", id: "r", data: { object: "list", data: [{ embedding: "x", index: 0 }] } })).ok).toBe(false);
  });

  it("base64 embeddings are little-endian float32, as the openai client decodes them", () => {
    const b64 = floatsAsBase64([1, -0.5, 0.25]);
    const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    expect([...new Float32Array(bytes.buffer)]).toEqual([1, -0.5, 0.25]);
  });
});
