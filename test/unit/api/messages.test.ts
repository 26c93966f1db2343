import { describe, expect, it } from "vitest";
import { convertMessagesRequest } from "../../../src/api/messages/convert-request.ts";
import { MessageEncoder } from "../../../src/api/messages/message-encoder.ts";
import { anthropicErrorType } from "../../../src/api/messages/anthropic-error.ts";
import { validateBody } from "../../../src/api/validate-body.ts";
import { MessagesRequestSchema } from "../../../src/schemas/messages-request.ts";
import type { UpstreamEvent } from "../../../src/stream/events.ts";

const convert = (body: Record<string, unknown>) => convertMessagesRequest(validateBody(MessagesRequestSchema, { model: "m", max_tokens: 50, ...body }));
const ext = () => ({ target: "llama:h:1", attempts: 1 });

function run(events: UpstreamEvent[]) {
  const enc = new MessageEncoder({ id: "msg_1", model: "m" }, ext);
  const out = [...events.flatMap((e) => enc.encode(e)), ...enc.end()] as Array<Record<string, any>>;
  return { out, types: out.map((e) => e.type), message: enc.message() as Record<string, any> };
}

describe("convertMessagesRequest", () => {
  it("system, stop_sequences, max_tokens, tools and tool_choice become their chat equivalents", () => {
    const chat = convert({
      system: [{ type: "text", text: "Be brief." }],
      messages: [{ role: "user", content: "Hi" }],
      stop_sequences: ["END"],
      top_k: 5,
      tools: [{ name: "get_weather", description: "w", input_schema: { type: "object", properties: { city: { type: "string" } } } }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
    });
    expect(chat.messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }]);
    expect(chat).toMatchObject({ max_tokens: 50, stop: ["END"], top_k: 5, tool_choice: "required", parallel_tool_calls: false });
    expect(chat.tools).toEqual([{ type: "function", function: { name: "get_weather", description: "w", parameters: { type: "object", properties: { city: { type: "string" } } } } }]);
    expect(chat).not.toHaveProperty("system");
    expect(chat).not.toHaveProperty("stop_sequences");
    expect(convert({ messages: [{ role: "user", content: "x" }], tool_choice: { type: "tool", name: "t" } }).tool_choice).toEqual({ type: "function", function: { name: "t" } });
  });

  it("round-trips the agent loop: tool_use → tool_calls with ids kept, tool_result → tool messages first", () => {
    const chat = convert({
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AA" } }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hm", signature: "x" },
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "sunny" }] },
            { type: "text", text: "And tomorrow?" },
          ],
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "boom", is_error: true }] },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] },
      {
        role: "assistant",
        content: "Checking.",
        reasoning_content: "hm",
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }],
      },
      { role: "tool", tool_call_id: "toolu_1", content: "sunny" },
      { role: "user", content: "And tomorrow?" },
      { role: "tool", tool_call_id: "toolu_2", content: "Error: boom" },
    ]);
  });

  it("refuses server tools and unknown blocks; requires max_tokens", () => {
    expect(() => convert({ messages: [{ role: "user", content: "x" }], tools: [{ type: "web_search_20250305", name: "web_search" }] })).toThrow(/Server tools/);
    expect(() => convert({ messages: [{ role: "user", content: [{ type: "document", source: {} }] }] })).toThrow(/document/);
    expect(() => validateBody(MessagesRequestSchema, { model: "m", messages: [{ role: "user", content: "x" }] })).toThrow(/max_tokens/);
  });
});

describe("MessageEncoder", () => {
  it("text: message_start, ping, block start/deltas/stop, message_delta with stop_reason and usage, message_stop", () => {
    const { types, out, message } = run([
      { type: "text", delta: "Hel" },
      { type: "text", delta: "lo" },
      { type: "finish", reason: "stop" },
      { type: "usage", usage: { promptTokens: 4, completionTokens: 2 } },
    ]);
    expect(types).toEqual(["message_start", "ping", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);
    expect(out[0]!.message).toMatchObject({ id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null });
    expect(out[2]).toEqual({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    expect(out[3]).toEqual({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } });
    expect(out[6]).toEqual({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { input_tokens: 4, output_tokens: 2 } });
    expect(message).toMatchObject({ content: [{ type: "text", text: "Hello" }], stop_reason: "end_turn", usage: { input_tokens: 4, output_tokens: 2 } });
  });

  it("tool calls: a tool_use block per call once the name settles, input_json_delta, stop_reason tool_use", () => {
    const { out, message } = run([
      { type: "reasoning", delta: "hm" },
      { type: "toolCall", index: 0, name: "get_w", argumentsDelta: "" },
      { type: "toolCall", index: 0, name: "get_weather", argumentsDelta: "" },
      { type: "toolCall", index: 0, argumentsDelta: '{"city":' },
      { type: "toolCall", index: 0, argumentsDelta: '"Paris"}' },
      { type: "toolCall", index: 1, name: "noop", argumentsDelta: "" },
      { type: "finish", reason: "tool_calls" },
    ]);
    const starts = out.filter((e) => e.type === "content_block_start").map((e) => e.content_block);
    expect(starts).toEqual([
      { type: "thinking", thinking: "", signature: "" },
      { type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "get_weather", input: {} },
      { type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "noop", input: {} },
    ]);
    const json = out.filter((e) => e.delta?.type === "input_json_delta" && e.index === 1).map((e) => e.delta.partial_json).join("");
    expect(json).toBe('{"city":"Paris"}');
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.map((b: any) => b.type)).toEqual(["thinking", "tool_use", "tool_use"]);
    expect(message.content[1].input).toEqual({ city: "Paris" });
    expect(message.content[2].input).toEqual({});
  });

  it("length → max_tokens; an error is one Anthropic error event and nothing after", () => {
    expect(run([{ type: "text", delta: "a" }, { type: "finish", reason: "length" }]).message.stop_reason).toBe("max_tokens");
    const enc = new MessageEncoder({ id: "msg_1", model: "m" }, ext);
    enc.encode({ type: "text", delta: "a" });
    const err = enc.encode({ type: "error", error: { status: 503, type: "unavailable_error", code: "no_capacity", message: "busy" } });
    expect(err).toEqual([{ type: "error", error: { type: "overloaded_error", message: "busy", code: "no_capacity" } }]);
    expect(enc.end()).toEqual([]);
    expect([400, 401, 404, 413, 429, 500, 502, 504].map(anthropicErrorType)).toEqual([
      "invalid_request_error", "authentication_error", "not_found_error", "request_too_large", "rate_limit_error", "api_error", "api_error", "timeout_error",
    ]);
  });
});
