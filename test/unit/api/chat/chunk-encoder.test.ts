import { describe, expect, it } from "vitest";
import { ChunkEncoder } from "../../../../src/api/chat/chunk-encoder.ts";
import type { UpstreamEvent } from "../../../../src/events/events.ts";

const meta = { id: "chatcmpl-abc", created: 1700000000, model: "my-model", includeUsage: false };
const ext = () => ({ target: "llama:h:1", attempts: 1 });

function run(events: UpstreamEvent[], includeUsage = false) {
  const enc = new ChunkEncoder({ ...meta, includeUsage }, ext);
  const out = events.flatMap((e) => enc.encode(e));
  return [...out, ...enc.end()] as Array<Record<string, any>>;
}

describe("ChunkEncoder", () => {
  it("puts id, object, created and the requested model on every chunk, role on the first delta only", () => {
    const chunks = run([
      { type: "text", delta: "Hel" },
      { type: "text", delta: "lo" },
      { type: "finish", reason: "stop" },
    ]);
    expect(chunks).toHaveLength(3);
    for (const c of chunks) expect(c).toMatchObject({ id: "chatcmpl-abc", object: "chat.completion.chunk", created: 1700000000, model: "my-model" });
    expect(chunks[0]!.choices[0].delta).toEqual({ role: "assistant", content: "Hel" });
    expect(chunks[1]!.choices[0].delta).toEqual({ content: "lo" });
    expect(chunks[2]!.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: "stop", logprobs: null });
    expect(chunks[2]!.x_switchyard).toEqual({ target: "llama:h:1", attempts: 1 });
  });

  it("emits usage as a final choices:[] chunk only when asked, with llama.cpp timings on the last chunk", () => {
    const events: UpstreamEvent[] = [
      { type: "text", delta: "a" },
      { type: "finish", reason: "length" },
      { type: "usage", usage: { promptTokens: 3, completionTokens: 1, cachedTokens: 2 }, timings: { predicted_n: 1 } },
    ];
    const withUsage = run(events, true);
    expect(withUsage).toHaveLength(3);
    // OpenAI's spec: with include_usage every chunk but the usage chunk carries "usage": null.
    expect(withUsage.slice(0, 2).map((c) => c.usage)).toEqual([null, null]);
    expect(withUsage[2]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, prompt_tokens_details: { cached_tokens: 2 } },
      timings: { predicted_n: 1 },
    });
    const without = run(events, false);
    expect(without).toHaveLength(2);
    expect(without[1]!.usage).toBeUndefined();
    expect(without[1]!.timings).toEqual({ predicted_n: 1 });
    expect(without[1]!.choices[0].finish_reason).toBe("length");
  });

  it("announces a tool call once with a stable call_ id and its final (replaced, not concatenated) name", () => {
    const chunks = run([
      { type: "toolCall", index: 0, id: "x7Kq", name: "get_weat", argumentsDelta: "" },
      { type: "toolCall", index: 0, id: "x7Kq", name: "get_weather", argumentsDelta: "{\"city\": \"Pa" },
      { type: "toolCall", index: 0, argumentsDelta: "ris\"}" },
      { type: "toolCall", index: 1, id: "y", name: "get_time", argumentsDelta: "{" },
      { type: "toolCall", index: 1, argumentsDelta: "}" },
      { type: "finish", reason: "tool_calls" },
    ]);
    const calls = chunks.flatMap((c) => c.choices?.[0]?.delta?.tool_calls ?? []);
    const names = calls.filter((c: any) => c.function.name !== undefined).map((c: any) => c.function.name);
    expect(names).toEqual(["get_weather", "get_time"]);
    const ids = calls.filter((c: any) => c.id).map((c: any) => c.id);
    expect(ids).toHaveLength(2);
    for (const id of ids) expect(id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    const args0 = calls.filter((c: any) => c.index === 0).map((c: any) => c.function.arguments).join("");
    expect(args0).toBe('{"city": "Paris"}');
    const args1 = calls.filter((c: any) => c.index === 1).map((c: any) => c.function.arguments).join("");
    expect(args1).toBe("{}");
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe("tool_calls");
  });

  it("ends with one error object after a failure: no finish chunk, nothing after it", () => {
    const chunks = run([
      { type: "text", delta: "a" },
      { type: "error", error: { status: 502, type: "api_error", code: "upstream_error", message: "boom" } },
      { type: "text", delta: "late" },
      { type: "finish", reason: "stop" },
    ]);
    expect(chunks).toHaveLength(2);
    expect(chunks[1]).toEqual({ error: { message: "boom", type: "api_error", param: null, code: "upstream_error" } });
  });

  it("drops a held finish when an error follows it (never a fake finish_reason)", () => {
    const chunks = run([
      { type: "text", delta: "a" },
      { type: "finish", reason: "stop" },
      { type: "error", error: { status: 502, type: "api_error", code: "upstream_error", message: "late failure" } },
    ]);
    expect(chunks.some((c) => c.choices?.[0]?.finish_reason)).toBe(false);
    expect(chunks.at(-1)!.error.code).toBe("upstream_error");
  });

  it("passes reasoning_content through", () => {
    const chunks = run([{ type: "reasoning", delta: "hmm" }, { type: "text", delta: "ok" }, { type: "finish", reason: "stop" }]);
    expect(chunks[0]!.choices[0].delta).toEqual({ role: "assistant", reasoning_content: "hmm" });
  });
});
