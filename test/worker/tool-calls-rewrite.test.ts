import { describe, expect, it } from "vitest";
import { call } from "./harness.ts";

const tools = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } },
];

describe("POST /v1/tool_calls/rewrite", () => {
  it("turns text into scored tool_calls, keeping the prose as content", async () => {
    const { res } = await call("/v1/tool_calls/rewrite", { json: { tools, text: 'Sure. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.content.trim()).toBe("Sure.");
    expect(body.tool_calls).toHaveLength(1);
    expect(body.tool_calls[0]).toMatchObject({ type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' }, score: 1, problems: [] });
    expect(body.tool_calls[0].id).toMatch(/^call_/);
  });

  it("always returns a tool_calls array, and content null only when there is none", async () => {
    const { res } = await call("/v1/tool_calls/rewrite", { json: { tools, text: "Just words." } });
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ content: "Just words.", tool_calls: [] });
  });

  it("scores a repaired call below 1 with stable problem codes", async () => {
    const { res } = await call("/v1/tool_calls/rewrite", { json: { tools, text: "{'name': 'get_weather', 'arguments': {'city': 'Paris',}}" } });
    const body = (await res.json()) as any;
    expect(body.tool_calls[0].score).toBeLessThan(1);
    expect(body.tool_calls[0].problems.map((p: any) => p.code)).toContain("json_repaired");
  });

  it("refuses a body without text with a 400 naming it", async () => {
    const { res } = await call("/v1/tool_calls/rewrite", { json: { tools } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error).toMatchObject({ code: "missing_required_parameter", param: "text" });
  });
});
