// Issue 26, finding 5: the stream rewriter's cost is linear in the output's length however it is
// split. Each case feeds a text that keeps the rewriter waiting (a "maybe a call" `{` followed by
// a flood of whitespace, a call marker inside an unclosed reasoning block…) in 16-character pieces,
// as the chat path does (ToolCallEvents over text events), at N and 4N characters: linear work
// grows about 4×, the old rescans grew 16×.

import { describe, expect, it } from "vitest";
import { ToolCallEvents, ToolCallStreamRewriter } from "./imports.ts";
import { ToolSet } from "../../../src/toolcalls/scoring/tool-set.ts";
import { TOOLS } from "./fixtures.ts";
import { randomSplits, rewriteToolCalls, streamChunks } from "./helpers.ts";

const PIECE = 16;

/** `prefix`, then `unit` repeated to `n` characters, then `suffix`. */
const flood = (prefix: string, unit: string, n: number, suffix = "") => prefix + unit.repeat(Math.ceil(n / unit.length)).slice(0, n) + suffix;

/** Streams `text` in PIECE-character text events through the chat path's stage; milliseconds. */
function streamMs(text: string): number {
  const t0 = performance.now();
  const stage = new ToolCallEvents(TOOLS);
  for (let i = 0; i < text.length; i += PIECE) stage.push({ type: "text", delta: text.slice(i, i + PIECE) });
  stage.push({ type: "finish", reason: "stop" });
  return performance.now() - t0;
}

/**
 * The cost at n and 4n: 4n must stay under 10× n's cost plus 50 ms. A run over the bound is
 * repeated (up to three times, the fastest counts): a GC pause or a busy neighbour is not the cost.
 */
function growth(text: (n: number) => string, n: number): { small: number; large: number; bound: number } {
  streamMs(text(n)); // warm-up: the JIT's first pass is not the cost
  const small = Math.min(streamMs(text(n)), streamMs(text(n)));
  const bound = 10 * small + 50;
  let large = streamMs(text(4 * n));
  for (let i = 0; i < 2 && large > bound; i++) large = Math.min(large, streamMs(text(4 * n)));
  return { small, large, bound };
}

const CALL = '<tool_call>{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>';

const CASES: Record<string, { text: (n: number) => string; n?: number }> = {
  "{ and a flood of spaces": { text: (n) => flood("{", " ", n) },
  "{ and a flood of newlines": { text: (n) => flood("{", "\n", n) },
  "{ and a flood of identifier characters": { text: (n) => flood("{", "a", n) },
  "[ and a flood of spaces": { text: (n) => flood("[", " ", n) },
  "[ in the middle of a line and a flood of spaces": { text: (n) => flood("See [", " ", n) },
  "[{ and a flood of spaces": { text: (n) => flood("[{", " ", n) },
  "a ```json fence line and a flood of spaces": { text: (n) => flood("```json\n", " ", n) },
  "a ```json fence line and <|tool_calls|> repeated": { text: (n) => flood("```json\n", "<|tool_calls|>", n) },
  "Action: and a flood of spaces": { text: (n) => flood("Action:", " ", n) },
  "a tool's name on its line and a flood of spaces": { text: (n) => flood("get_weather\n", " ", n) },
  "a comma after a call and a flood of spaces": { text: (n) => flood(CALL + ",", " ", n) },
  "visible text and a flood of spaces": { text: (n) => flood("Hello", " ", n, "x") },
  "a call marker inside an unclosed reasoning block and a flood": { text: (n) => flood("<think>Let me call <tool_call>", "a", n), n: 100_000 },
};

describe("the stream rewriter's cost is linear in the text, split in 16-character pieces", () => {
  for (const [name, { text, n = 30_000 }] of Object.entries(CASES)) {
    it(name, () => {
      const { small, large, bound } = growth(text, n);
      expect(large, `${n} chars: ${small.toFixed(1)} ms, ${4 * n} chars: ${large.toFixed(1)} ms`).toBeLessThan(bound);
    });
  }
});

/** `{"name":` nested `depth` deep, closed: a candidate at every depth, none of them a call. */
const nestedNames = (depth: number) => '{"name":'.repeat(depth) + "1" + "}".repeat(depth) + "\n";


/** The real tool set, counting the names it is asked to resolve: one per call read from a region. */
class CountingToolSet extends ToolSet {
  resolves = 0;
  override resolve(name: string, allowFuzzy: boolean) {
    this.resolves++;
    return super.resolve(name, allowFuzzy);
  }
}

/** A call to an undeclared tool whose arguments hold another, `depth` deep: each is a rejected candidate. */
const nestedUnknownCalls = (depth: number) => '{"name": "nope", "arguments": {"x": '.repeat(depth) + "1" + "}}".repeat(depth);

describe("a rejected candidate nested in rejected candidates is not parsed at every depth", () => {
  it("the regions read do not grow with the depth (each was parsed once per depth)", () => {
    const parses = (depth: number) => {
      const tools = new CountingToolSet(TOOLS);
      const rw = new ToolCallStreamRewriter(tools);
      const text = nestedUnknownCalls(depth);
      for (let i = 0; i < text.length; i += PIECE) rw.push(text.slice(i, i + PIECE));
      rw.flush();
      return tools.resolves;
    };
    const shallow = parses(3);
    expect(shallow).toBe(3);
    expect(parses(40)).toBeLessThanOrEqual(8);
    expect(parses(80)).toBe(parses(40));
  });
});

describe("waiting longer on a maybe changes nothing the stream gives", () => {
  const oneShot = (text: string) => {
    const r = rewriteToolCalls({ tools: TOOLS, text, startInReasoning: false });
    return { content: r.content, reasoning: r.reasoning_content ?? "", calls: r.tool_calls.map((c) => [c.function.name, c.function.arguments]) };
  };
  const streamed = (chunks: string[]) => {
    const s = streamChunks(TOOLS, chunks);
    return { content: s.content, reasoning: s.reasoning, calls: s.calls };
  };
  const texts = {
    "a call after a long gap of spaces": flood("{", " ", 3000, '"name": "get_time", "arguments": {"tz": "CET"}}'),
    "prose after a long gap of spaces": flood("{", " ", 3000, "is a brace.") + " Done.",
    "a fence whose call comes after a long gap": flood("```json\n", "\n", 2000, '{"name": "get_time", "arguments": {"tz": "CET"}}\n```\nok'),
    "a call after a comma and a long gap": flood(CALL + ",", " ", 2000, CALL),
    "a call drafted in reasoning that closes after a long flood": flood("<think>draft <tool_call>", "thinking ", 5000, "</think>The answer.\n" + CALL),
    "a call in reasoning the output ends inside": flood("<think>so <tool_call>", " ", 3000, '{"name": "get_time", "arguments": {"tz": "CET"}}</tool_call>'),
    "text ending in whitespace after visible text": flood("Hello", " ", 3000, "world") + "   ",
    "candidates nested in a rejected candidate, then a call": nestedNames(50) + "x " + nestedNames(3) + CALL,
    "a call inside a rejected candidate": '{"name": "John", "items": [' + CALL + "]}\nok",
  };
  for (const [name, text] of Object.entries(texts)) {
    it(`${name}: in 16-character pieces, one character at a time and in random splits`, () => {
      const expected = oneShot(text);
      const pieces = text.match(/[\s\S]{1,16}/g)!;
      expect(streamed(pieces)).toEqual(expected);
      expect(streamed([...text])).toEqual(expected);
      for (let seed = 1; seed <= 4; seed++) expect(streamed(randomSplits(text, seed, 40))).toEqual(expected);
    });
  }

  it("a call drafted in reasoning is still held until the block closes", () => {
    const rw = new ToolCallStreamRewriter(TOOLS, { startInReasoning: false });
    const out = [...rw.push("<think>maybe <tool_call>"), ...rw.push(" ".repeat(500)), ...rw.push("more thought")];
    expect(out.filter((e) => e.type === "toolCall")).toEqual([]);
    const closed = rw.push("</think>Hi");
    expect(closed.some((e) => e.type === "reasoning" && e.delta.includes("more thought"))).toBe(true);
    expect(closed.some((e) => e.type === "text" && e.delta === "Hi")).toBe(true);
  });
});
