import { describe, expect, it } from "vitest";
import { TOOLS } from "./fixtures.ts";
import { callsOf, rewriteToolCalls } from "./helpers.ts";

const TWO = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>\n<tool_call>{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>';

describe("tool_choice and parallel_tool_calls", () => {
  it('"none": no calls, the text is content', () => {
    const r = rewriteToolCalls({ tools: TOOLS, text: TWO, tool_choice: "none" });
    expect(r.tool_calls).toEqual([]);
    expect(r.content).toBe(TWO);
  });

  it("a named function: only that tool can be called", () => {
    const r = rewriteToolCalls({ tools: TOOLS, text: TWO, tool_choice: { type: "function", function: { name: "get_time" } } });
    expect(callsOf(r)).toEqual([["get_time", { tz: "CET" }]]);
    expect(r.content).toContain("get_weather");
  });

  it("parallel_tool_calls false: the first call only, the rest reported on it", () => {
    const r = rewriteToolCalls({ tools: TOOLS, text: TWO, parallel_tool_calls: false });
    expect(callsOf(r)).toEqual([["get_weather", { city: "Paris" }]]);
    expect(r.tool_calls[0]!.problems.map((p) => p.code)).toEqual(["extra_calls_dropped"]);
    expect(r.tool_calls[0]!.score).toBe(1);
    expect(r.content).toBeNull();
  });

  it('"required" and "auto" rewrite as usual', () => {
    for (const tool_choice of ["required", "auto"] as const) {
      expect(callsOf(rewriteToolCalls({ tools: TOOLS, text: TWO, tool_choice }))).toHaveLength(2);
    }
  });

  it("no tools: reasoning is still split off, nothing else changes", () => {
    const r = rewriteToolCalls({ tools: [], text: "<think>x</think>{\"name\": \"get_weather\"}" });
    expect(r).toEqual({ content: '{"name": "get_weather"}', reasoning_content: "x", tool_calls: [] });
  });
});
