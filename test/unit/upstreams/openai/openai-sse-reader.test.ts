// openAiSseReader on the edges of a stream: endings, bad frames, keep-alives, both reasoning names,
// usage placement, and a prefill the answer continues.
import { describe, expect, it } from "vitest";
import { readOpenAiSse } from "./read-openai-sse.ts";

const frame = (delta: object, finish: string | null = null, extra: object = {}) => `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
const usageFrame = (prompt: number, completion: number) => `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion } })}\n\n`;

describe("openAiSseReader", () => {
  it("a stream that ends without a finish is an error, never a silent truncation", () => {
    const events = readOpenAiSse([frame({ content: "a" })]);
    expect(events.at(-1)).toMatchObject({ type: "error", error: { code: "upstream_error", retryable: true } });
  });

  it("[DONE] without a finish is an error too (no made-up finish_reason)", () => {
    const events = readOpenAiSse([frame({ content: "a" }), "data: [DONE]\n\n"]);
    expect(events.map((e) => e.type)).toEqual(["text", "error"]);
  });

  it("keep-alive comments, CRLF and a last frame without its blank line", () => {
    const body = `: ping\r\n\r\n${frame({ content: "a" }).replace(/\n/g, "\r\n")}data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}`;
    expect(readOpenAiSse([body])).toEqual([
      { type: "text", delta: "a" },
      { type: "finish", reason: "stop" },
    ]);
  });

  it("a frame that is not JSON fails the stream once", () => {
    const events = readOpenAiSse([frame({ content: "a" }), "data: {nope\n\n", frame({ content: "b" }, "stop")]);
    expect(events.map((e) => e.type)).toEqual(["text", "error"]);
  });

  it("both reasoning names with the same text (a server in transition) count once; reasoning_content wins", () => {
    const events = readOpenAiSse([frame({ reasoning_content: "think", reasoning: "think" }), frame({ reasoning: "more" }), frame({}, "stop")]);
    expect(events).toEqual([
      { type: "reasoning", delta: "think" },
      { type: "reasoning", delta: "more" },
      { type: "finish", reason: "stop" },
    ]);
  });

  it("usage goes out once, after the finish, the latest seen (vLLM's continuous_usage_stats)", () => {
    const withUsage = (delta: object, finish: string | null, n: number) => frame(delta, finish, { usage: { prompt_tokens: 5, completion_tokens: n } });
    const events = readOpenAiSse([withUsage({ content: "a" }, null, 1), withUsage({ content: "b" }, null, 2), withUsage({}, "length", 2), "data: [DONE]\n\n"]);
    expect(events).toEqual([
      { type: "text", delta: "a" },
      { type: "text", delta: "b" },
      { type: "finish", reason: "length" },
      { type: "usage", usage: { promptTokens: 5, completionTokens: 2 } },
    ]);
  });

  it("usage with cached tokens, and llama.cpp's timings passed on by a gateway", () => {
    const body = frame({ content: "x" }, "stop") + `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 1, prompt_tokens_details: { cached_tokens: 4 } }, timings: { predicted_n: 1 } })}\n\n`;
    expect(readOpenAiSse([body]).at(-1)).toEqual({ type: "usage", usage: { promptTokens: 9, completionTokens: 1, cachedTokens: 4 }, timings: { predicted_n: 1 } });
  });

  it("older vLLM's top-level error object in a stream", () => {
    const body = frame({ content: "a" }) + `data: ${JSON.stringify({ object: "error", message: "boom", type: "InternalServerError", code: 500 })}\n\n`;
    expect(readOpenAiSse([body]).at(-1)).toMatchObject({ type: "error", error: { status: 502, retryable: true } });
  });

  it("an error frame of a client mistake keeps its 4xx and is not retryable", () => {
    const body = `data: ${JSON.stringify({ error: { message: "bad tool schema", type: "BadRequestError", code: 400 } })}\n\n`;
    expect(readOpenAiSse([body])).toMatchObject([{ type: "error", error: { status: 400, retryable: false } }]);
  });

  it("only the first choice is read, and a second finish is dropped", () => {
    const two = `data: ${JSON.stringify({ choices: [{ index: 1, delta: { content: "other" }, finish_reason: null }, { index: 0, delta: { content: "mine" }, finish_reason: "stop" }] })}\n\n`;
    expect(readOpenAiSse([two, frame({}, "stop")])).toEqual([
      { type: "text", delta: "mine" },
      { type: "finish", reason: "stop" },
    ]);
  });

  it("whole tool calls without an index take their position", () => {
    const body = frame({ tool_calls: [{ id: "a", function: { name: "f", arguments: "{}" } }, { id: "b", function: { name: "g", arguments: "{}" } }] }, "tool_calls");
    expect(readOpenAiSse([body]).filter((e) => e.type === "toolCall")).toEqual([
      { type: "toolCall", index: 0, id: "a", name: "f", argumentsDelta: "{}" },
      { type: "toolCall", index: 1, id: "b", name: "g", argumentsDelta: "{}" },
    ]);
  });

  it("logprobs entries ride on their text", () => {
    const entries = [{ token: "a", logprob: -0.1, bytes: [97], top_logprobs: [] }];
    const body = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "a" }, logprobs: { content: entries }, finish_reason: "stop" }] })}\n\n`;
    expect(readOpenAiSse([body])[0]).toEqual({ type: "text", delta: "a", logprobs: entries });
  });

  describe("with a prefill", () => {
    it("a server that sends only what follows (vLLM, Ollama): the answer is made to begin with the prefill", () => {
      const events = readOpenAiSse([frame({ content: "rld" }), frame({ content: "!" }), frame({}, "stop")], { prefill: "Hello wo" });
      expect(events).toEqual([
        { type: "text", delta: "Hello wo" },
        { type: "text", delta: "rld" },
        { type: "text", delta: "!" },
        { type: "finish", reason: "stop" },
      ]);
    });

    it("a server that echoes it (llama-server behind a gateway): passed as it is", () => {
      const events = readOpenAiSse([frame({ content: "Hello" }), frame({ content: " world" }), frame({}, "stop")], { prefill: "Hello wo" });
      expect(events.map((e) => (e.type === "text" ? e.delta : e.type)).join("|")).toBe("Hello| world|finish");
    });
  });
});
