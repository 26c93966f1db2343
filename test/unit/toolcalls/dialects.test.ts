import { describe, expect, it } from "vitest";
import { DIALECT_SAMPLES, TOOLS } from "./fixtures.ts";
import { callsOf, rewriteToolCalls } from "./helpers.ts";

describe("every dialect of reference §1 becomes OpenAI tool_calls", () => {
  for (const [name, sample] of Object.entries(DIALECT_SAMPLES)) {
    it(name, () => {
      const result = rewriteToolCalls({ tools: TOOLS, text: sample.text });
      expect(callsOf(result)).toEqual(sample.calls);
      expect(result.content).toBe(sample.content === undefined ? null : sample.content);
      if (sample.reasoning !== undefined) expect(result.reasoning_content).toBe(sample.reasoning);
      for (const call of result.tool_calls) {
        expect(call.type).toBe("function");
        expect(call.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
        expect(call.score).toBeGreaterThan(0.9);
      }
    });
  }
});

describe("text around the calls", () => {
  it("keeps the text before and after a call as content", () => {
    const r = rewriteToolCalls({
      tools: TOOLS,
      text: 'Let me look.\n<tool_call>{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>\nBack soon.',
    });
    expect(r.content).toBe("Let me look.\nBack soon.");
    expect(callsOf(r)).toEqual([["get_time", { tz: "CET" }]]);
  });

  it("reads a forced-open reasoning block (no <think>, only </think>) as reasoning", () => {
    const r = rewriteToolCalls({
      tools: TOOLS,
      text: 'The user wants weather.</think>\n<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
    });
    expect(r.reasoning_content).toBe("The user wants weather.");
    expect(r.content).toBeNull();
    expect(callsOf(r)).toEqual([["get_weather", { city: "Paris" }]]);
  });

  it("never reads a call written inside the reasoning block", () => {
    const r = rewriteToolCalls({
      tools: TOOLS,
      text: '<think>maybe <tool_call>{"name": "get_time", "arguments": {"tz": "UTC"}}</tool_call>?</think>\nIt is noon.',
    });
    expect(r.tool_calls).toEqual([]);
    expect(r.content).toBe("It is noon.");
    expect(r.reasoning_content).toContain("<tool_call>");
  });

  it("passes a code fence that holds no call through unchanged", () => {
    const text = "Run this:\n```python\nimport math\nprint(math.factorial(5))\n```\nDone.";
    const r = rewriteToolCalls({ tools: TOOLS, text });
    expect(r.tool_calls).toEqual([]);
    expect(r.content).toBe(text);
  });

  it("emits the declared name even when the model wrote a dotted one", () => {
    const r = rewriteToolCalls({ tools: TOOLS, text: "[math.factorial(number=5)]" });
    expect(r.tool_calls[0]!.function.name).toBe("math_factorial");
    expect(r.tool_calls[0]!.problems.map((p) => p.code)).toEqual(["name_separator_mismatch"]);
  });
});
