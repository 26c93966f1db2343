import { describe, expect, it } from "vitest";
import { MAX_REWRITE_TEXT_LENGTH, MAX_REWRITE_TOOLS, MAX_TOOL_NAME_LENGTH, MAX_TOOL_SCHEMA_DEPTH } from "../../src/schemas/tool-limits.ts";
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

  describe("bounded input (src/schemas/tool-limits.ts)", () => {
    const refusal = async (json: unknown) => {
      const { res } = await call("/v1/tool_calls/rewrite", { json });
      expect(res.status).toBe(400);
      return ((await res.json()) as any).error;
    };
    /** A schema whose objects nest exactly `levels` deep (`{items: {items: … {type: "string"}}}`). */
    const deep = (levels: number) => {
      let schema: Record<string, unknown> = { type: "string" };
      for (let i = 1; i < levels; i++) schema = { type: "array", items: schema };
      return schema;
    };

    it("refuses a text over 1,048,576 characters, and takes one at the limit", async () => {
      expect(await refusal({ tools, text: "x".repeat(MAX_REWRITE_TEXT_LENGTH + 1) })).toMatchObject({ code: "invalid_value", param: "text" });
      const { res } = await call("/v1/tool_calls/rewrite", { json: { tools, text: "x".repeat(MAX_REWRITE_TEXT_LENGTH) } });
      expect(res.status).toBe(200);
    });

    it("refuses more than 512 tools", async () => {
      const many = Array.from({ length: MAX_REWRITE_TOOLS + 1 }, (_, i) => ({ type: "function", function: { name: `t${i}` } }));
      const error = await refusal({ tools: many, text: "hi" });
      expect(error).toMatchObject({ code: "invalid_value", param: "tools" });
      expect(error.message).toContain("at most 512");
    });

    it("refuses a tool name over 128 characters or of other characters, naming it", async () => {
      for (const name of ["a".repeat(MAX_TOOL_NAME_LENGTH + 1), "get weather", "wetter_heute_ü", ""]) {
        const error = await refusal({ tools: [...tools, ...tools, ...tools, { type: "function", function: { name } }], text: "hi" });
        expect(error, name).toMatchObject({ code: "invalid_value", param: "tools[3].function.name" });
        expect(error.message, name).toContain("must be 1 to 128 characters");
      }
    });

    it("takes the names agents send: MCP prefixes, dots, colons and slashes, up to 128 characters", async () => {
      for (const name of ["mcp__github__create_pull_request", "admin.tools.list", "user-profile/update", "server:tool", "a".repeat(MAX_TOOL_NAME_LENGTH)]) {
        const { res } = await call("/v1/tool_calls/rewrite", { json: { tools: [{ type: "function", function: { name } }], text: "hi" } });
        expect(res.status, name).toBe(200);
      }
    });

    it("refuses a tool's parameters nested more than 64 deep, naming the tool", async () => {
      const ok = [{ type: "function", function: { name: "f", parameters: deep(MAX_TOOL_SCHEMA_DEPTH) } }];
      expect((await call("/v1/tool_calls/rewrite", { json: { tools: ok, text: "hi" } })).res.status).toBe(200);
      const tooDeep = [...tools, { type: "function", function: { name: "f", parameters: deep(MAX_TOOL_SCHEMA_DEPTH + 1) } }];
      expect(await refusal({ tools: tooDeep, text: "hi" })).toMatchObject({ code: "invalid_value", param: "tools[1].function.parameters" });
    });

    it("refuses tools whose parameters together are over 1,048,576 characters of JSON", async () => {
      const big = (i: number) => ({ type: "function", function: { name: `t${i}`, parameters: { type: "object", description: "d".repeat(300_000) } } });
      const error = await refusal({ tools: [big(0), big(1), big(2), big(3)], text: "hi" });
      expect(error).toMatchObject({ code: "invalid_value", param: "tools" });
    });
  });
});
