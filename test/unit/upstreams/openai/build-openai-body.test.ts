// The body an OpenAI-compatible server is sent for a chat request.
import { describe, expect, it } from "vitest";
import type { ChatRequest } from "../../../../src/schemas/chat-request.ts";
import { buildOpenAiBody, prefillOf } from "../../../../src/upstreams/openai/build-openai-body.ts";

const req = (extra: Partial<ChatRequest> & Record<string, unknown> = {}): ChatRequest => ({ model: "coder", messages: [{ role: "user", content: "hi" }], ...extra }) as ChatRequest;
const tools = [{ type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];

describe("buildOpenAiBody", () => {
  it("always streams with usage, keeps the client's fields, and maps the model", () => {
    const body = buildOpenAiBody(req({ stream: false, top_k: 20, chat_template_kwargs: { enable_thinking: false } }), { model: "Qwen/Qwen3-8B" });
    expect(body).toMatchObject({ model: "Qwen/Qwen3-8B", stream: true, stream_options: { include_usage: true }, top_k: 20, chat_template_kwargs: { enable_thinking: false } });
    expect(buildOpenAiBody(req(), {}).model).toBe("coder");
  });

  it("native tools pass through untouched; history calls get their type", () => {
    const messages = [
      { role: "user", content: "w?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", function: { name: "get_weather", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "sunny" },
    ];
    const body = buildOpenAiBody(req({ messages, tools, tool_choice: { type: "function", function: { name: "get_weather" } } } as never), {});
    expect(body.tools).toEqual(tools);
    expect(body.tool_choice).toEqual({ type: "function", function: { name: "get_weather" } });
    expect((body.messages as Array<{ tool_calls?: Array<{ type?: string; id?: string }> }>)[1]!.tool_calls![0]).toMatchObject({ type: "function", id: "call_1" });
  });

  it('tools: "prompt": the tools go into the prompt and the reply is constrained by a json_schema response_format', () => {
    const body = buildOpenAiBody(req({ tools }), { tools: "prompt" });
    expect(body.tools).toBeUndefined();
    expect((body.messages as Array<{ role: string; content: string }>)[0]).toMatchObject({ role: "system" });
    expect((body.messages as Array<{ content: string }>)[0]!.content).toContain("get_weather");
    const format = body.response_format as { type: string; json_schema: { name: string; schema: object } };
    expect(format.type).toBe("json_schema");
    expect(format.json_schema.name).toBe("tool_call");
    expect(JSON.stringify(format.json_schema.schema)).toContain("get_weather");
    expect(body.grammar).toBeUndefined();
  });

  it('tools: "prompt" leaves a client response_format as the client sent it', () => {
    const own = { type: "json_schema", json_schema: { name: "x", schema: { const: "y" } } };
    expect(buildOpenAiBody(req({ tools, response_format: own } as never), { tools: "prompt" }).response_format).toEqual(own);
  });

  describe("a trailing assistant message, by the target's prefill", () => {
    const prefilled = req({ messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "Hello wo" }] } as never);
    it("continue_final_message (vLLM, SGLang)", () => {
      expect(buildOpenAiBody(prefilled, { prefill: "continue_final_message" })).toMatchObject({ continue_final_message: true, add_generation_prompt: false });
    });
    it("prefix (Mistral, DeepSeek)", () => {
      const body = buildOpenAiBody(prefilled, { prefill: "prefix" });
      expect((body.messages as object[]).at(-1)).toEqual({ role: "assistant", content: "Hello wo", prefix: true });
      expect((prefilled.messages.at(-1) as Record<string, unknown>).prefix).toBeUndefined();
    });
    it("partial (Moonshot)", () => {
      expect((buildOpenAiBody(prefilled, { prefill: "partial" }).messages as object[]).at(-1)).toEqual({ role: "assistant", content: "Hello wo", partial: true });
    });
    it("assistant (Ollama): as it is", () => {
      const body = buildOpenAiBody(prefilled, { prefill: "assistant" });
      expect(body.continue_final_message).toBeUndefined();
      expect((body.messages as object[]).at(-1)).toEqual({ role: "assistant", content: "Hello wo" });
    });
    it("no prefill configured: nothing added", () => {
      expect(buildOpenAiBody(prefilled, {}).continue_final_message).toBeUndefined();
    });
    it("nothing added without a trailing assistant message", () => {
      expect(buildOpenAiBody(req(), { prefill: "continue_final_message" }).continue_final_message).toBeUndefined();
    });
  });

  it("strip and set come last", () => {
    const body = buildOpenAiBody(req({ grammar: "root ::= x", temperature: 1 } as never), { strip: ["grammar"], set: { temperature: 0, stream_options: { include_usage: true, continuous_usage_stats: false } } });
    expect(body.grammar).toBeUndefined();
    expect(body.temperature).toBe(0);
    expect(body.stream_options).toEqual({ include_usage: true, continuous_usage_stats: false });
  });
});

describe("prefillOf", () => {
  it("the trailing assistant text, as a string or its text parts, only when the target continues", () => {
    const parts = req({ messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "text", text: "Hel" }, { type: "text", text: "lo" }] }] } as never);
    expect(prefillOf(parts, { prefill: "assistant" })).toBe("Hello");
    expect(prefillOf(parts, {})).toBeUndefined();
    expect(prefillOf(req(), { prefill: "assistant" })).toBeUndefined();
  });
});
