import { describe, expect, it } from "vitest";
import { buildLlamaBody } from "../../../../src/upstreams/llama/build-llama-body.ts";
import { validateChatRequest } from "../../../../src/api/chat/index.ts";

const tools = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object" } } },
  { type: "function", function: { name: "get_time", parameters: { type: "object" } } },
];

describe("buildLlamaBody", () => {
  it("keeps unknown fields, always streams and always asks for usage", () => {
    const req = validateChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }], top_k: 5, min_p: 0.1, grammar: 'root ::= "x"', cache_prompt: false, json_schema: { type: "object" } });
    const body = buildLlamaBody(req, {});
    expect(body).toMatchObject({ top_k: 5, min_p: 0.1, grammar: 'root ::= "x"', cache_prompt: false, json_schema: { type: "object" }, stream: true, stream_options: { include_usage: true } });
  });

  it("turns a named tool_choice into only that tool plus required", () => {
    const req = validateChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }], tools, tool_choice: { type: "function", function: { name: "get_time" } } });
    const body = buildLlamaBody(req, {});
    expect(body.tool_choice).toBe("required");
    expect((body.tools as any[]).map((t) => t.function.name)).toEqual(["get_time"]);
  });

  it("adds a missing tool-call type and maps ids to 9 alphanumerics consistently", () => {
    const req = validateChatRequest({
      model: "m",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_abcdefghijklmnopqrstuvwx", function: { name: "get_weather", arguments: "{}" } }, { id: "aB3dE5gH7", type: "function", function: { name: "get_time", arguments: {} } }] },
        { role: "tool", tool_call_id: "call_abcdefghijklmnopqrstuvwx", content: "sunny" },
        { role: "tool", tool_call_id: "aB3dE5gH7", content: "noon" },
      ],
    });
    const msgs = buildLlamaBody(req, {}).messages as any[];
    const [a, b] = msgs[1].tool_calls;
    expect(a.type).toBe("function");
    expect(a.id).toMatch(/^[A-Za-z0-9]{9}$/);
    expect(msgs[2].tool_call_id).toBe(a.id);
    expect(b.id).toBe("aB3dE5gH7");
    expect(msgs[3].tool_call_id).toBe("aB3dE5gH7");
    expect(a.id).not.toBe(b.id);
  });

  it("applies a target's model, strip and set lists", () => {
    const req = validateChatRequest({ model: "team-model", messages: [{ role: "user", content: "hi" }], seed: 3, user: "alice" });
    const body = buildLlamaBody(req, { model: "qwen-7b.gguf", strip: ["user"], set: { temperature: 0.2 } });
    expect(body.model).toBe("qwen-7b.gguf");
    expect(body.user).toBeUndefined();
    expect(body.temperature).toBe(0.2);
    expect(body.seed).toBe(3);
  });

  it("maps max_completion_tokens to max_tokens for llama-server", () => {
    const req = validateChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }], max_completion_tokens: 7 });
    expect(buildLlamaBody(req, {}).max_tokens).toBe(7);
  });
});
