import { describe, expect, it } from "vitest";
import { adaptForWebLlm } from "../../../../src/upstreams/browser/adapt-for-web-llm.ts";
import { validateChatRequest } from "../../../../src/api/chat/index.ts";
import { normalizeWebLlmChunk } from "../../../../src/upstreams/browser/normalize-web-llm-chunk.ts";

const tools = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
  { type: "function", function: { name: "get_time", parameters: { type: "object" } } },
];
const HERMES = "Hermes-3-Llama-3.1-8B-q4f32_1-MLC";
const req = (extra: Record<string, unknown>) => validateChatRequest({ model: "m", messages: [{ role: "user", content: "weather?" }], tools, ...extra });

describe("web-llm tool modes", () => {
  it("prompt mode for models without web-llm tool calling: tools in the system prompt, a json_object schema", () => {
    const body = adaptForWebLlm(req({}), "Qwen2.5-0.5B-Instruct-q4f32_1-MLC") as any;
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
    expect(body.messages[0]).toMatchObject({ role: "system" });
    expect(body.messages[0].content).toContain("get_time");
    expect(body.response_format.type).toBe("json_object");
    expect(JSON.stringify(JSON.parse(body.response_format.schema))).toContain("get_weather");
  });

  it("native tools for web-llm's Hermes models when the request allows it (no system prompt, no response_format)", () => {
    const body = adaptForWebLlm(req({ tool_choice: { type: "function", function: { name: "get_time" } } }), HERMES) as any;
    expect(body.tools.map((t: any) => t.function.name)).toEqual(["get_time"]);
    expect(body.tool_choice).toBeUndefined();
    expect(body.response_format).toBeUndefined();
    expect(body.messages.every((m: any) => m.role !== "system")).toBe(true);
  });

  it("prompt mode for Hermes too when the client sends a system prompt (web-llm would refuse it)", () => {
    const body = adaptForWebLlm(
      validateChatRequest({ model: "m", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "weather?" }], tools }),
      HERMES,
    ) as any;
    expect(body.tools).toBeUndefined();
    expect(body.messages[0].content).toContain("Be brief.");
    expect(body.messages[0].content).toContain("get_weather");
  });

  it("history tool calls and results become text web-llm accepts (string content, user/tool last)", () => {
    const body = adaptForWebLlm(
      validateChatRequest({
        model: "m",
        tools,
        messages: [
          { role: "user", content: "weather?" },
          { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } }] },
          { role: "tool", tool_call_id: "call_1", content: "sunny" },
        ],
      }),
      "Qwen2.5-0.5B-Instruct-q4f32_1-MLC",
    ) as any;
    const [, , assistant, result] = body.messages;
    expect(assistant).toMatchObject({ role: "assistant" });
    expect(JSON.parse(assistant.content)).toEqual({ tool_call: { name: "get_weather", arguments: { city: "Paris" } } });
    expect(result).toMatchObject({ role: "user" });
    expect(result.content).toContain("sunny");
  });

  it("web-llm's final tool_calls delta is not announced again (the streamed content carries the calls)", () => {
    const events = normalizeWebLlmChunk(
      { choices: [{ index: 0, delta: { role: "assistant", tool_calls: [{ index: 0, function: { name: "get_weather", arguments: "{}" } }] } as any, finish_reason: "tool_calls" }] },
      "browser:x",
    );
    expect(events).toEqual([{ type: "finish", reason: "tool_calls" }]);
  });
});
