import { Validator } from "@cfworker/json-schema";
import { describe, expect, it } from "vitest";
import { buildToolCallGrammar, buildToolCallSchema, buildToolPrompt, type JsonSchema } from "./imports.ts";
import { TOOLS } from "./fixtures.ts";
import { callsOf, rewriteToolCalls } from "./helpers.ts";

const valid = (schema: JsonSchema, value: unknown) => new Validator(schema, "2020-12", false).validate(value).valid;

describe("prompt mode", () => {
  it("describes every tool and the no-call answer", () => {
    const prompt = buildToolPrompt(TOOLS)!;
    for (const t of TOOLS) expect(prompt).toContain(`## ${t.function.name}`);
    expect(prompt).toContain('{"response": "<your answer>"}');
    expect(prompt).toContain('"tool_calls"');
  });

  it("drops the answer choice when a call is required, and parallel calls when disabled", () => {
    const prompt = buildToolPrompt(TOOLS, { tool_choice: "required", parallel_tool_calls: false })!;
    expect(prompt).not.toContain('"response"');
    expect(prompt).not.toContain('"tool_calls"');
    expect(prompt).toContain("You must call a tool.");
  });

  it("has nothing to add for tool_choice none", () => {
    expect(buildToolPrompt(TOOLS, { tool_choice: "none" })).toBeNull();
    expect(buildToolCallSchema(TOOLS, { tool_choice: "none" })).toBeNull();
    expect(buildToolCallGrammar([], {})).toBeNull();
  });

  it("the JSON Schema admits declared calls with fitting arguments and the answer, nothing else", () => {
    const schema = buildToolCallSchema(TOOLS)!;
    expect(valid(schema, { tool_call: { name: "get_weather", arguments: { city: "Paris" } } })).toBe(true);
    expect(valid(schema, { tool_calls: [{ name: "get_time", arguments: { tz: "CET" } }] })).toBe(true);
    expect(valid(schema, { response: "Hello" })).toBe(true);
    expect(valid(schema, { tool_call: { name: "book_flight", arguments: {} } })).toBe(false);
    expect(valid(schema, { tool_call: { name: "get_weather", arguments: { days: 2 } } })).toBe(false);
    expect(valid(schema, { tool_call: { name: "get_weather", arguments: { city: "Paris" } }, extra: 1 })).toBe(false);
  });

  it("a named tool_choice narrows the schema to that tool, without the answer", () => {
    const schema = buildToolCallSchema(TOOLS, { tool_choice: { type: "function", function: { name: "get_time" } } })!;
    expect(valid(schema, { tool_call: { name: "get_time", arguments: { tz: "CET" } } })).toBe(true);
    expect(valid(schema, { tool_call: { name: "get_weather", arguments: { city: "Paris" } } })).toBe(false);
    expect(valid(schema, { response: "Hello" })).toBe(false);
  });

  it("the grammar names every tool as a JSON string literal", () => {
    const grammar = buildToolCallGrammar(TOOLS)!;
    expect(grammar).toMatch(/^root ::= call \| calls \| answer$/m);
    expect(grammar).toContain('name ::= "\\"get_weather\\"" | "\\"get_time\\"" | "\\"math_factorial\\"" | "\\"brave_search\\""');
  });

  it("what the constrained model writes is read back by the rewriter", () => {
    const calls = rewriteToolCalls({ tools: TOOLS, text: '{"tool_call": {"name": "get_time", "arguments": {"tz": "CET"}}}' });
    expect(callsOf(calls)).toEqual([["get_time", { tz: "CET" }]]);
    expect(rewriteToolCalls({ tools: TOOLS, text: '{"response": "Hi."}' }).content).toBe("Hi.");
  });
});
