import { describe, expect, it } from "vitest";
import { CompletionAggregator } from "../../../../src/api/chat/completion-aggregator.ts";

const meta = { id: "chatcmpl-abc", created: 1700000000, model: "my-model", includeUsage: false };
const ext = () => ({ target: "llama:h:1", attempts: 2 });

describe("CompletionAggregator", () => {
  it("gathers the content tokens' logprobs in order; none asked, none given (null)", () => {
    const a = new CompletionAggregator();
    const hi = { token: "Hi", logprob: -1, bytes: [72, 105], top_logprobs: [] };
    const dot = { token: ".", logprob: -2, bytes: [46], top_logprobs: [] };
    a.push({ type: "text", delta: "Hi", logprobs: [hi] });
    a.push({ type: "text", delta: "." , logprobs: [dot] });
    a.push({ type: "finish", reason: "stop" });
    expect((a.result(meta, ext).choices as any)[0].logprobs).toEqual({ content: [hi, dot], refusal: null });
    const b = new CompletionAggregator();
    b.push({ type: "text", delta: "Hi" });
    expect((b.result(meta, ext).choices as any)[0].logprobs).toBeNull();
  });

  it("gathers text, usage and timings into one chat.completion", () => {
    const a = new CompletionAggregator();
    a.push({ type: "text", delta: "Hel" });
    a.push({ type: "text", delta: "lo" });
    a.push({ type: "finish", reason: "stop" });
    a.push({ type: "usage", usage: { promptTokens: 3, completionTokens: 2 }, timings: { predicted_n: 2 } });
    expect(a.result(meta, ext)).toEqual({
      id: "chatcmpl-abc",
      object: "chat.completion",
      created: 1700000000,
      model: "my-model",
      choices: [{ index: 0, message: { role: "assistant", content: "Hello", refusal: null }, finish_reason: "stop", logprobs: null }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      timings: { predicted_n: 2 },
      x_switchyard: { target: "llama:h:1", attempts: 2 },
    });
  });

  it("has content null when only tool calls are present, with replaced names and joined arguments", () => {
    const a = new CompletionAggregator();
    a.push({ type: "toolCall", index: 0, id: "u", name: "get_weat", argumentsDelta: "" });
    a.push({ type: "toolCall", index: 0, name: "get_weather", argumentsDelta: '{"city":' });
    a.push({ type: "toolCall", index: 0, argumentsDelta: '"Paris"}' });
    a.push({ type: "finish", reason: "tool_calls" });
    const msg = (a.result(meta, ext) as any).choices[0].message;
    expect(msg.content).toBeNull();
    expect(msg.tool_calls).toEqual([{ id: expect.stringMatching(/^call_/), type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }]);
  });

  it("reports a failure instead of a body", () => {
    const a = new CompletionAggregator();
    a.push({ type: "text", delta: "x" });
    a.push({ type: "error", error: { status: 502, type: "api_error", code: "upstream_error", message: "boom" } });
    expect(a.failed?.code).toBe("upstream_error");
  });
});
