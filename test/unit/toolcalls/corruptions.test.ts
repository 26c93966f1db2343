import { describe, expect, it } from "vitest";
import { TOOLS } from "./fixtures.ts";
import { callsOf, rewriteToolCalls } from "./helpers.ts";

const codes = (text: string) => {
  const r = rewriteToolCalls({ tools: TOOLS, text });
  return { calls: callsOf(r), codes: r.tool_calls.map((c) => c.problems.map((p) => p.code)), result: r };
};

describe("broken JSON is repaired (by jsonrepair) and the repair is scored", () => {
  it("trailing commas", () => {
    const r = codes('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 2,},}</tool_call>');
    expect(r.calls).toEqual([["get_weather", { city: "Paris", days: 2 }]]);
    expect(r.codes).toEqual([["json_repaired"]]);
  });

  it("single quotes and Python literals", () => {
    const r = codes("{'name': 'get_weather', 'arguments': {'city': 'Paris', 'metric': True}}");
    expect(r.calls).toEqual([["get_weather", { city: "Paris", metric: true }]]);
    expect(r.codes).toEqual([["json_repaired"]]);
  });

  it("an apostrophe inside a single-quoted string", () => {
    const r = codes("<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Val d\\'Isère'}}</tool_call>");
    expect(r.calls).toEqual([["get_weather", { city: "Val d'Isère" }]]);
  });

  it("output cut off by max_tokens inside a string", () => {
    const r = codes('{"name": "get_weather", "arguments": {"city": "Par');
    expect(r.calls).toEqual([["get_weather", { city: "Par" }]]);
    expect(r.codes).toEqual([["truncated"]]);
    expect(r.result.tool_calls[0]!.score).toBeLessThan(0.7);
  });

  it("output cut off before the closing brackets and tag", () => {
    const r = codes('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3');
    expect(r.calls).toEqual([["get_weather", { city: "Paris", days: 3 }]]);
    expect(r.codes).toEqual([["truncated"]]);
  });

  it("truncated pythonic calls close at the end", () => {
    const r = codes("[get_weather(city='Paris'), get_time(tz='CE");
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }], ["get_time", { tz: "CE" }]]);
    expect(r.codes).toEqual([[], ["truncated"]]);
  });

  it("truncated Qwen3-Coder XML keeps the last value", () => {
    const r = codes("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n4");
    expect(r.calls).toEqual([["get_weather", { city: "Paris", days: 4 }]]);
    expect(r.codes).toEqual([["truncated"]]);
  });

  it("a missing closing tag with prose after the call", () => {
    const r = codes('<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}\nI will report back.');
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
    expect(r.codes).toEqual([["missing_closing_tag"]]);
    expect(r.result.content).toBe("I will report back.");
  });

  it("a missing closing tag before the next call", () => {
    const r = codes(
      '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}\n<tool_call>{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>',
    );
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }], ["get_time", { tz: "CET" }]]);
    expect(r.codes).toEqual([["missing_closing_tag"], []]);
  });

  it("double-encoded OpenAI-style arguments", () => {
    const inner = JSON.stringify(JSON.stringify({ city: "Paris" }));
    const r = codes(JSON.stringify({ name: "get_weather", arguments: inner }));
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
    expect(r.codes).toEqual([["arguments_double_encoded"]]);
  });

  it("a code fence without its closing line", () => {
    const r = codes('```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}');
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
    expect(r.codes).toEqual([["missing_closing_tag"]]);
  });

  it("prose after a closing fence on the same line stays content", () => {
    const r = codes('```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n``` Let me know!');
    expect(r.calls).toEqual([["get_weather", { city: "Paris" }]]);
    expect(r.result.content).toBe("Let me know!");
  });

  it("BFCL's missing brackets around pythonic calls", () => {
    expect(codes("get_weather(city='Paris'), get_time(tz='CET')]").calls).toEqual([
      ["get_weather", { city: "Paris" }],
      ["get_time", { tz: "CET" }],
    ]);
  });
});
