import { describe, expect, it } from "vitest";
import { convertResponsesRequest } from "../../../src/api/responses/convert-request.ts";
import { ResponseEncoder, type ResponseStreamEvent } from "../../../src/api/responses/response-encoder.ts";
import { ResponsesRequestSchema } from "../../../src/schemas/responses-request.ts";
import { validateBody } from "../../../src/api/validate-body.ts";
import type { UpstreamEvent } from "../../../src/events/events.ts";

const convert = (body: Record<string, unknown>) => convertResponsesRequest(validateBody(ResponsesRequestSchema, { model: "m", ...body })).chat;
const ext = () => ({ target: "llama:h:1", attempts: 1 });

function run(events: UpstreamEvent[]) {
  const enc = new ResponseEncoder({ id: "resp_1", createdAt: 1, model: "m", echo: {} }, ext);
  const out: ResponseStreamEvent[] = [...events.flatMap((e) => enc.encode(e)), ...enc.end()];
  return { out, types: out.map((e) => e.type), response: enc.response() as Record<string, any> };
}

describe("convertResponsesRequest", () => {
  it("turns a string input and instructions into system + user messages, max_output_tokens into max_tokens", () => {
    const chat = convert({ input: "Hi", instructions: "Be brief.", max_output_tokens: 7, temperature: 0, top_k: 3 });
    expect(chat.messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "Hi" }]);
    expect(chat.max_tokens).toBe(7);
    expect(chat.temperature).toBe(0);
    expect(chat.top_k).toBe(3);
    expect(chat).not.toHaveProperty("input");
    expect(chat).not.toHaveProperty("max_output_tokens");
  });

  it("round-trips the agent loop: function_call items join the assistant message, outputs become tool messages", () => {
    const chat = convert({
      input: [
        { role: "developer", content: "Use tools." },
        { role: "user", content: [{ type: "input_text", text: "Weather in " }, { type: "input_text", text: "Paris?" }] },
        { type: "reasoning", id: "rs_1", summary: [], content: [{ type: "reasoning_text", text: "think" }] },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "Let me check." }] },
        { type: "function_call", call_id: "call_a", name: "get_weather", arguments: '{"city":"Paris"}' },
        { type: "function_call", call_id: "call_b", name: "get_time", arguments: "{}" },
        { type: "function_call_output", call_id: "call_a", output: "sunny" },
        { type: "function_call_output", call_id: "call_b", output: [{ type: "input_text", text: "noon" }] },
      ],
      tools: [{ type: "function", name: "get_weather", parameters: { type: "object" } }],
      tool_choice: { type: "function", name: "get_weather" },
    });
    expect(chat.messages).toEqual([
      { role: "system", content: "Use tools." },
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: "Let me check.",
        reasoning_content: "think",
        tool_calls: [
          { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "call_b", type: "function", function: { name: "get_time", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_a", content: "sunny" },
      { role: "tool", tool_call_id: "call_b", content: "noon" },
    ]);
    expect(chat.tools).toEqual([{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }]);
    expect(chat.tool_choice).toEqual({ type: "function", function: { name: "get_weather" } });
  });

  it("maps text.format json_schema to response_format and keeps images as image_url parts", () => {
    const chat = convert({
      input: [{ role: "user", content: [{ type: "input_text", text: "What is it?" }, { type: "input_image", image_url: "data:image/png;base64,AA" }] }],
      text: { format: { type: "json_schema", name: "thing", schema: { type: "object" }, strict: true } },
    });
    expect(chat.response_format).toEqual({ type: "json_schema", json_schema: { name: "thing", schema: { type: "object" }, strict: true } });
    expect(chat.messages[0]!.content).toEqual([
      { type: "text", text: "What is it?" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AA" } },
    ]);
  });

  it("refuses what needs unresolved stored state or cannot be converted, naming the parameter", () => {
    const param = (body: Record<string, unknown>) => {
      try {
        convert(body);
      } catch (e: any) {
        return [e.status, e.code, e.param];
      }
      return null;
    };
    expect(param({ input: "x", previous_response_id: "resp_1" })).toEqual([400, "unsupported_parameter", "previous_response_id"]);
    expect(param({ input: [{ type: "item_reference", id: "msg_1" }] })).toEqual([400, "unsupported_parameter", "input[0].type"]);
    expect(param({ input: "x", tools: [{ type: "function" }] })).toEqual([400, "unsupported_parameter", "tools[0].name"]);
    expect(param({ input: "x", tool_choice: { type: "function" } })).toEqual([400, "unsupported_parameter", "tool_choice.name"]);
    expect(param({ input: [{ type: "frobnicate" }] })).toEqual([400, "unsupported_parameter", "input[0].type"]);
    expect(param({ input: "x", background: true })).toEqual([400, "unsupported_parameter", "background"]);
    expect(() => validateBody(ResponsesRequestSchema, { model: "m" })).toThrow(/input/);
  });
});

describe("Responses logprobs", () => {
  it("asks for token logprobs only when include names them, with top_logprobs", () => {
    expect(convert({ input: "hi", include: ["message.output_text.logprobs"], top_logprobs: 3 })).toMatchObject({ logprobs: true, top_logprobs: 3 });
    const plain = convert({ input: "hi", top_logprobs: 3 }) as Record<string, unknown>;
    expect(plain.logprobs).toBeUndefined();
    expect(plain.top_logprobs).toBeUndefined();
    expect(plain.include).toBeUndefined();
  });

  it("puts each delta's entries on its output_text.delta, and all of them on the done event and the part", () => {
    const hel = { token: "Hel", logprob: -1, bytes: [72, 101, 108], top_logprobs: [] };
    const lo = { token: "lo", logprob: -2, bytes: [108, 111], top_logprobs: [] };
    const { out, response } = run([
      { type: "text", delta: "Hel", logprobs: [hel] },
      { type: "text", delta: "lo", logprobs: [lo] },
      { type: "finish", reason: "stop" },
    ]);
    const deltas = out.filter((e) => e.type === "response.output_text.delta");
    expect(deltas.map((e) => e.logprobs)).toEqual([[hel], [lo]]);
    expect(out.find((e) => e.type === "response.output_text.done")!.logprobs).toEqual([hel, lo]);
    expect(response.output[0].content[0].logprobs).toEqual([hel, lo]);
  });
});

describe("ResponseEncoder", () => {
  it("text: created, in_progress, item and part added, deltas, done events, completed with usage", () => {
    const { types, out, response } = run([
      { type: "text", delta: "Hel" },
      { type: "text", delta: "lo" },
      { type: "finish", reason: "stop" },
      { type: "usage", usage: { promptTokens: 3, completionTokens: 2 } },
    ]);
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, i) => i));
    expect(out[6]).toMatchObject({ text: "Hello", output_index: 0, content_index: 0 });
    expect(response).toMatchObject({ id: "resp_1", object: "response", status: "completed", model: "m", x_switchyard: { target: "llama:h:1" } });
    expect(response.output).toEqual([
      { id: expect.stringMatching(/^msg_/), type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Hello", annotations: [], logprobs: [] }] },
    ]);
    expect(response.usage).toEqual({ input_tokens: 3, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 5 });
    expect(out[0]).toMatchObject({ response: { status: "in_progress", output: [], usage: null } });
  });

  it("tool calls: announced once the name settles, argument deltas, done with the full arguments", () => {
    const { types, out, response } = run([
      { type: "reasoning", delta: "hmm" },
      { type: "toolCall", index: 0, name: "get_w", argumentsDelta: "" },
      { type: "toolCall", index: 0, name: "get_weather", argumentsDelta: "" },
      { type: "toolCall", index: 0, argumentsDelta: '{"city":' },
      { type: "toolCall", index: 0, argumentsDelta: '"Paris"}' },
      { type: "toolCall", index: 1, name: "get_time", argumentsDelta: "{}" },
      { type: "finish", reason: "tool_calls" },
    ]);
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(out[8]).toMatchObject({ output_index: 1, item: { type: "function_call", name: "get_weather", arguments: "", status: "in_progress" } });
    const calls = response.output.filter((i: any) => i.type === "function_call");
    expect(calls.map((c: any) => [c.name, c.arguments, c.status])).toEqual([
      ["get_weather", '{"city":"Paris"}', "completed"],
      ["get_time", "{}", "completed"],
    ]);
    expect(calls[0].call_id).toMatch(/^call_/);
    expect(calls[0].id).toMatch(/^fc_/);
    expect(response.output[0]).toMatchObject({ type: "reasoning", content: [{ type: "reasoning_text", text: "hmm" }] });
  });

  it("max tokens: response.incomplete with reason max_output_tokens", () => {
    const { types, response } = run([{ type: "text", delta: "a" }, { type: "finish", reason: "length" }]);
    expect(types.at(-1)).toBe("response.incomplete");
    expect(response).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
  });

  it("an error ends the stream with response.failed and an error event, nothing after", () => {
    const enc = new ResponseEncoder({ id: "resp_1", createdAt: 1, model: "m", echo: {} }, ext);
    enc.encode({ type: "text", delta: "Par" });
    const err = enc.encode({ type: "error", error: { status: 502, type: "api_error", code: "upstream_error", message: "broke" } });
    expect(err.map((e) => e.type)).toEqual(["response.failed", "error"]);
    // The failed response's code is one of the spec's (clients type it as that enum); Switchyard's is the error event's.
    expect(err[0]).toMatchObject({ response: { status: "failed", error: { code: "server_error", message: "broke" } } });
    expect(err[1]).toMatchObject({ code: "upstream_error", message: "broke", param: null });
    expect(enc.end()).toEqual([]);
    expect(enc.failed?.code).toBe("upstream_error");
  });
});
