import { describe, expect, it } from "vitest";
import { convertMessagesRequest } from "../../../src/api/messages/convert-request.ts";
import { MessageEncoder } from "../../../src/api/messages/message-encoder.ts";
import { anthropicErrorType } from "../../../src/api/messages/anthropic-error.ts";
import { validateBody } from "../../../src/api/validate-body.ts";
import { CountTokensRequestSchema, MessagesRequestSchema } from "../../../src/schemas/messages-request.ts";
import type { UpstreamEvent } from "../../../src/events/events.ts";
import { createSealer } from "../../../src/api/responses/sealer.ts";

const convert = (body: Record<string, unknown>) => convertMessagesRequest(validateBody(MessagesRequestSchema, { model: "m", max_tokens: 50, ...body }));
const ext = () => ({ target: "llama:h:1", attempts: 1 });

function run(events: UpstreamEvent[], sign?: (thinking: string) => string) {
  const enc = new MessageEncoder({ id: "msg_1", model: "m" }, ext, sign);
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

  it("refuses server tools and unknown blocks; requires max_tokens (count_tokens does not)", () => {
    expect(() => convert({ messages: [{ role: "user", content: "x" }], tools: [{ type: "web_search_20250305", name: "web_search" }] })).toThrow(/Server tools/);
    expect(() => convert({ messages: [{ role: "user", content: "x" }], tools: [{ type: "web_search_20250305", name: "web_search", defer_loading: true }] })).toThrow(/Server tools/);
    expect(() => convert({ messages: [{ role: "user", content: [{ type: "document", source: {} }] }] })).toThrow(/document/i);
    expect(() => convert({ messages: [{ role: "user", content: [{ type: "container_upload", file_id: "f" }] }] })).toThrow(/container_upload/);
    expect(() => convert({ messages: [{ role: "system", content: [{ type: "image", source: { type: "url", url: "u" } }] }] })).toThrow(/System content blocks/);
    expect(() => validateBody(MessagesRequestSchema, { model: "m", messages: [{ role: "user", content: "x" }] })).toThrow(/max_tokens/);
    const counted = convertMessagesRequest(validateBody(CountTokensRequestSchema, { model: "m", messages: [{ role: "user", content: "x" }] }));
    expect(counted).not.toHaveProperty("max_tokens");
    expect(() => validateBody(MessagesRequestSchema, { model: "m", max_tokens: 5, messages: [{ role: "tool", content: "x" }] })).toThrow(/role/);
  });

  it("a system message inside messages stays a system message at its place; cache_control is ignored", () => {
    const chat = convert({
      system: [{ type: "text", text: "Top.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] },
        { role: "system", content: [{ type: "text", text: "# Env", cache_control: { type: "ephemeral" } }, { type: "text", text: "cwd: /w" }] },
        { role: "assistant", content: "hello" },
        { role: "system", content: "Later." },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "system", content: "Top." },
      { role: "user", content: "hi" },
      { role: "system", content: "# Env\ncwd: /w" },
      { role: "assistant", content: "hello" },
      { role: "system", content: "Later." },
    ]);
  });

  it("Anthropic-only fields (thinking, context_management, output_config, metadata) are not forwarded", () => {
    const chat = convert({
      messages: [{ role: "user", content: "x" }],
      thinking: { type: "adaptive", display: "omitted" },
      context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      output_config: { effort: "high" },
      metadata: { user_id: "u" },
    });
    for (const key of ["thinking", "context_management", "output_config", "metadata"]) expect(chat).not.toHaveProperty(key);
  });

  it("deferred tools are hidden until a tool_reference loads them; tool_addition / tool_removal change the set", () => {
    const tools = [
      { name: "ToolSearch", input_schema: { type: "object" } },
      { name: "Cron", input_schema: { type: "object" }, defer_loading: true },
      { name: "Placeholder", input_schema: { type: "object" }, defer_loading: true },
    ];
    const names = (body: Record<string, unknown>) => convert({ tools, ...body }).tools?.map((t) => t.function.name);
    expect(names({ messages: [{ role: "user", content: "x" }] })).toEqual(["ToolSearch"]);

    const searched = convert({
      tools,
      messages: [
        { role: "user", content: "schedule it" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: { query: "cron" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "tool_reference", tool_name: "Cron" }] }] },
      ],
    });
    expect(searched.tools?.map((t) => t.function.name)).toEqual(["ToolSearch", "Cron"]);
    expect(searched.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "toolu_1", content: "Tools now available: Cron." });

    const changed = convert({
      tools,
      messages: [
        { role: "user", content: "x" },
        {
          role: "system",
          content: [
            { type: "tool_addition", tool: { type: "tool_definition", definition: { name: "Late", description: "d", input_schema: { type: "object", properties: { a: { type: "string" } } } } } },
            { type: "tool_addition", tool: { type: "tool_reference", name: "Placeholder" } },
            { type: "tool_removal", tool: { type: "tool_reference", name: "ToolSearch" } },
          ],
        },
      ],
    });
    expect(changed.tools?.map((t) => t.function.name)).toEqual(["Late", "Placeholder"]);
    expect(changed.tools?.[0]).toEqual({ type: "function", function: { name: "Late", description: "d", parameters: { type: "object", properties: { a: { type: "string" } } } } });
    expect(changed.messages).toEqual([{ role: "user", content: "x" }]); // a system message of tool changes only adds no text
    expect(() => convert({ messages: [{ role: "system", content: [{ type: "tool_addition", tool: { type: "tool_definition", definition: { type: "bash_20250124", name: "bash" } } }] }] })).toThrow(/Server tools/);
    expect(() => convert({ messages: [{ role: "system", content: [{ type: "tool_removal", tool: {} }] }] })).toThrow(/tool_reference/);
  });

  it("text documents and search results are read as text; a PDF is a 400 that says what to send; a tool result's image follows in the user turn", () => {
    const chat = convert({
      messages: [
        {
          role: "user",
          content: [
            { type: "document", title: "Notes", source: { type: "text", media_type: "text/plain", data: "line one" } },
            { type: "document", source: { type: "content", content: [{ type: "text", text: "part A" }, { type: "text", text: " part B" }] } },
            { type: "search_result", source: "https://example.com/a", title: "A", content: [{ type: "text", text: "found" }] },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Read", input: { path: "p.png" } }] },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "the image:" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AA" } }] }],
        },
      ],
    });
    expect(chat.messages[0]).toEqual({ role: "user", content: "Notes\n\nline one\n\npart A part B\n\nA\n\nSource: https://example.com/a\nfound" });
    expect(chat.messages.slice(2)).toEqual([
      { role: "tool", tool_call_id: "toolu_1", content: "the image:" },
      { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] },
    ]);
    const pdf = { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" } };
    expect(() => convert({ messages: [{ role: "user", content: [pdf] }] })).toThrow(/application\/pdf.*extracted text/);
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
    expect(out[2]).toEqual({ type: "content_block_start", index: 0, content_block: { type: "text", text: "", citations: null } });
    expect(out[3]).toEqual({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } });
    const usage = { input_tokens: 4, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 2 };
    const deltaUsage = { ...usage, output_tokens_details: null, server_tool_use: null };
    expect(out[6]).toEqual({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null, stop_details: null, container: null }, usage: deltaUsage });
    expect(message).toMatchObject({ content: [{ type: "text", text: "Hello", citations: null }], stop_reason: "end_turn", stop_details: null, container: null, usage });
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
      { type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "get_weather", input: {}, caller: { type: "direct" } },
      { type: "tool_use", id: expect.stringMatching(/^toolu_/), name: "noop", input: {}, caller: { type: "direct" } },
    ]);
    const json = out.filter((e) => e.delta?.type === "input_json_delta" && e.index === 1).map((e) => e.delta.partial_json).join("");
    expect(json).toBe('{"city":"Paris"}');
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.map((b: any) => b.type)).toEqual(["thinking", "tool_use", "tool_use"]);
    expect(message.content[1].input).toEqual({ city: "Paris" });
    expect(message.content[2].input).toEqual({});
  });

  it("a thinking block ends with its signature: a signature_delta before content_block_stop, and on the message", () => {
    const sealer = createSealer(new Uint8Array(32).fill(7));
    const sign = (t: string) => sealer.sign("messages.thinking", t);
    const { out, message } = run(
      [
        { type: "reasoning", delta: "Let me " },
        { type: "reasoning", delta: "think." },
        { type: "text", delta: "Done." },
        { type: "finish", reason: "stop" },
      ],
      sign,
    );
    const signature = sign("Let me think.");
    expect(signature).toMatch(/^sy1\./);
    expect(out.slice(2, 7)).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let me " } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "think." } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature } },
      { type: "content_block_stop", index: 0 },
    ]);
    expect(message.content).toEqual([{ type: "thinking", thinking: "Let me think.", signature }, { type: "text", text: "Done.", citations: null }]);
    expect(sealer.verify("messages.thinking", message.content[0].thinking, message.content[0].signature)).toBe(true);
    // No signature_delta on text blocks; a thinking block still open at the end is signed as it closes.
    expect(out.filter((e) => e.delta?.type === "signature_delta")).toHaveLength(1);
    const open = run([{ type: "reasoning", delta: "hm" }], sign);
    expect(open.out.filter((e) => e.delta?.type === "signature_delta").map((e) => e.delta.signature)).toEqual([sign("hm")]);
  });

  it("usage: input_tokens is always present and leaves out llama-server's cached prompt tokens (cache_read_input_tokens)", () => {
    const { out, message } = run([
      { type: "text", delta: "a" },
      { type: "finish", reason: "stop" },
      { type: "usage", usage: { promptTokens: 100, completionTokens: 3, cachedTokens: 80 } },
    ]);
    // What only Anthropic's platform has is zero or null, in every usage object (the SDK's types require the fields).
    const platform = { cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, inference_geo: null, output_tokens_details: null, server_tool_use: null, service_tier: null };
    expect(out[0]!.message.usage).toEqual({ input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0, ...platform });
    const usage = { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 80, output_tokens: 3 };
    expect(out.find((e) => e.type === "message_delta")!.usage).toEqual({ ...usage, output_tokens_details: null, server_tool_use: null });
    expect(message.usage).toEqual({ ...usage, ...platform });
  });

  it("length → max_tokens; an error is one Anthropic error event and nothing after", () => {
    expect(run([{ type: "text", delta: "a" }, { type: "finish", reason: "length" }]).message.stop_reason).toBe("max_tokens");
    const enc = new MessageEncoder({ id: "msg_1", model: "m" }, ext);
    enc.encode({ type: "text", delta: "a" });
    const err = enc.encode({ type: "error", error: { status: 503, type: "unavailable_error", code: "no_capacity", message: "busy" } });
    expect(err).toEqual([{ type: "error", error: { type: "overloaded_error", message: "busy", code: "no_capacity" }, request_id: null }]);
    expect(enc.end()).toEqual([]);
    expect([400, 401, 404, 413, 429, 500, 502, 504].map(anthropicErrorType)).toEqual([
      "invalid_request_error", "authentication_error", "not_found_error", "request_too_large", "rate_limit_error", "api_error", "api_error", "timeout_error",
    ]);
  });
});
