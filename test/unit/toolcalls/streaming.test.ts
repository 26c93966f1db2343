import { describe, expect, it } from "vitest";
import { ToolCallStreamRewriter } from "./imports.ts";
import { DIALECT_SAMPLES, TOOLS } from "./fixtures.ts";
import { randomSplits, rewriteToolCalls, streamChunks } from "./helpers.ts";

const oneShot = (text: string) => {
  const r = rewriteToolCalls({ tools: TOOLS, text, startInReasoning: false });
  return {
    content: r.content,
    reasoning: r.reasoning_content ?? "",
    calls: r.tool_calls.map((c) => [c.function.name, c.function.arguments]),
    problems: r.tool_calls.map((c) => c.problems.map((p) => p.code)),
  };
};
const streamed = (text: string, chunks: string[]) => {
  const s = streamChunks(TOOLS, chunks);
  return { content: s.content, reasoning: s.reasoning, calls: s.calls, problems: s.scored.map((c) => c.problems.map((p) => p.code)) };
};

const EXTRA = {
  "prose, fence, think and two calls": '<think>plan</think>Sure.\n```json\n{"name": "get_time", "arguments": {"tz": "CET"}}\n```\nAnd:\n[get_weather(city="Paris")]\nDone.',
  "broken JSON": "{'name': 'get_weather', 'arguments': {'city': 'Paris', 'metric': True,}}",
  "truncated": '<tool_call>{"name": "get_weather", "arguments": {"city": "Par',
  "prose with braces": 'Use {x} and [y] and <b>z</b>; {"name": "John"} is data.',
};

describe("the stream gives what the one-shot rewrite gives", () => {
  const all = { ...Object.fromEntries(Object.entries(DIALECT_SAMPLES).map(([k, v]) => [k, v.text])), ...EXTRA };
  for (const [name, text] of Object.entries(all)) {
    it(`${name}: one character at a time and in random splits`, () => {
      const expected = oneShot(text);
      expect(streamed(text, [...text])).toEqual(expected);
      for (let seed = 1; seed <= 12; seed++) expect(streamed(text, randomSplits(text, seed))).toEqual(expected);
    });
  }
});

describe("what the stream holds back", () => {
  it("emits plain text at once, before the rest of the output exists", () => {
    const rw = new ToolCallStreamRewriter(TOOLS);
    expect(rw.push("The weather in Paris is ")).toEqual([{ type: "text", delta: "The weather in Paris is" }]);
    expect(rw.push("sunny today.")).toEqual([{ type: "text", delta: " sunny today." }]);
  });

  it("holds only a suffix that may still become a marker", () => {
    const rw = new ToolCallStreamRewriter(TOOLS);
    expect(rw.push("Checking now <tool")).toEqual([{ type: "text", delta: "Checking now" }]);
    expect(rw.push("kit> is a word")).toEqual([{ type: "text", delta: " <toolkit> is a word" }]);
  });

  it("emits the text before a call before the call is complete", () => {
    const rw = new ToolCallStreamRewriter(TOOLS);
    expect(rw.push('Let me check.\n<tool_call>{"name": "get_wea')).toEqual([{ type: "text", delta: "Let me check." }]);
    const events = rw.push('ther", "arguments": {"city": "Paris"}}</tool_call>');
    expect(events.map((e) => e.type)).toEqual(["toolCall", "toolCall"]);
    expect(events[0]).toMatchObject({ type: "toolCall", index: 0, name: "get_weather", argumentsDelta: "" });
    expect(events[1]).toEqual({ type: "toolCall", index: 0, argumentsDelta: '{"city": "Paris"}' });
    expect(rw.flush()).toEqual([]);
    expect(rw.finishReason("stop")).toBe("tool_calls");
  });

  it("streams reasoning as it comes", () => {
    const rw = new ToolCallStreamRewriter(TOOLS);
    expect(rw.push("<think>Thinking ab")).toEqual([{ type: "reasoning", delta: "Thinking ab" }]);
    expect(rw.push("out it</th")).toEqual([{ type: "reasoning", delta: "out it" }]);
    expect(rw.push("ink>Answer")).toEqual([{ type: "text", delta: "Answer" }]);
  });

  it("holds a first word only while it may still become a declared tool's name", () => {
    const rw = new ToolCallStreamRewriter(TOOLS);
    expect(rw.push("get_")).toEqual([]);
    expect(rw.push("weather is nice")).toEqual([{ type: "text", delta: "get_weather is nice" }]);
  });

  it("starts inside reasoning when the template opened it", () => {
    const s = streamChunks(TOOLS, ["Plan: weather.", "</think>", "It is sunny."], { startInReasoning: true });
    expect(s.reasoning).toBe("Plan: weather.");
    expect(s.content).toBe("It is sunny.");
  });

  it("finds the same calls for a forced-open block even when not told", () => {
    const text = 'Plan.</think>\n<tool_call>{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>';
    const s = streamChunks(TOOLS, randomSplits(text, 3));
    const r = rewriteToolCalls({ tools: TOOLS, text });
    expect(s.calls).toEqual(r.tool_calls.map((c) => [c.function.name, c.function.arguments]));
  });

  it("keeps finish 'stop' when no call was found and 'length' as it is", () => {
    const rw = new ToolCallStreamRewriter(TOOLS);
    rw.push("Just text.");
    rw.flush();
    expect(rw.finishReason("stop")).toBe("stop");
    const cut = new ToolCallStreamRewriter(TOOLS);
    cut.push('{"name": "get_weather", "arguments": {"city": "Par');
    expect(cut.flush().filter((e) => e.type === "toolCall")).toHaveLength(2);
    expect(cut.finishReason("length")).toBe("length");
  });

  it("does not rescan the whole text on every delta (long prose stays linear)", () => {
    const rw = new ToolCallStreamRewriter(TOOLS);
    const piece = "Some prose with a {brace} and <tag> and [link]. ";
    const t0 = performance.now();
    let out = 0;
    for (let i = 0; i < 4000; i++) out += rw.push(piece).length;
    rw.flush();
    expect(out).toBeGreaterThan(3000);
    // 200 kB of prose: far below a second even on a slow machine when each delta is scanned once.
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});
