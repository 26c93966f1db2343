// Issue 26, findings 1, 3 and 4 (and what the sweep of src/toolcalls found besides): each hostile
// input is parsed at a size n and at 8n (4n for the cubic one), and the larger may cost at most
// 2.5 × the growth in size times the smaller, plus 100 ms. Linear work grows 8×; the old parsers grew
// 64× (quadratic) or more and fail the bound by a wide margin.

import { describe, expect, it } from "vitest";
import { parseMinimaxM3Calls } from "../../../src/toolcalls/dialects/minimax-m3.ts";
import { parseQwenXmlCalls } from "../../../src/toolcalls/dialects/qwen3-coder.ts";
import { editDistanceWithin, resolveToolName, foldName } from "../../../src/toolcalls/scoring/resolve-tool-name.ts";
import { parseJson } from "../../../src/toolcalls/json/parse-json.ts";
import { MAX_TOOL_NAME_LENGTH } from "../../../src/schemas/tool-limits.ts";
import { ToolCallStreamRewriter, rewriteToolCalls, type ToolDefinition } from "./imports.ts";

const tool = (name: string, properties: Record<string, unknown> = {}): ToolDefinition => ({
  type: "function",
  function: { name, parameters: { type: "object", properties } },
});

function timeMs(run: () => void): number {
  const t0 = performance.now();
  run();
  return performance.now() - t0;
}

/**
 * Times `run(n)` (best of two, after a warm-up) and `run(factor × n)` (once: on a superlinear parser
 * it is the slow one), and checks that the growth is linear within a generous bound.
 */
function expectLinear(n: number, run: (n: number) => void, factor = 8): void {
  // Warm up (the JIT, the first GC) for a few runs or 50 ms, whichever comes first.
  for (let i = 0, spent = 0; i < 5 && spent < 50; i++) spent += timeMs(() => run(n));
  const small = Math.min(timeMs(() => run(n)), timeMs(() => run(n)));
  const large = timeMs(() => run(factor * n));
  expect(large, `n=${n}: ${small.toFixed(1)} ms, ${factor}n: ${large.toFixed(1)} ms`).toBeLessThan(2.5 * factor * small + 100);
}

describe("finding 1: Mistral's [TOOL_CALLS] name and body", () => {
  it("reads a name followed by a flood of spaces in linear time", () => {
    // The old regex had three `\s*` in a row: 2,000 spaces took 1.6 s, 4,000 spaces 12 s.
    expectLinear(500, (n) => rewriteToolCalls({ tools: [tool("f")], text: "[TOOL_CALLS]f" + " ".repeat(n) + "x" }), 4);
  });

  it("still reads every v11 form the regex read", () => {
    const tools = [tool("get_weather", { city: { type: "string" } })];
    for (const text of [
      '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
      '[TOOL_CALLS]get_weather [CALL_ID] abc123 [ARGS] {"city": "Paris"}',
      '[TOOL_CALLS]get_weather[CALL_ID]abc123[ARGS]{"city": "Paris"}',
      '[TOOL_CALLS]get_weather  {"city": "Paris"}',
    ]) {
      const r = rewriteToolCalls({ tools, text });
      expect(r.tool_calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]), text).toEqual([["get_weather", { city: "Paris" }]]);
    }
  });
});

describe("finding 3: the XML-style dialects", () => {
  it("reads GLM keys with no value after them in linear time", () => {
    // The lazy key/value regex re-read the rest of the text from every <arg_key>: 4.7 s at 320 KB.
    expectLinear(1_500, (n) => rewriteToolCalls({ tools: [tool("f")], text: "<tool_call>f" + "<arg_key>a</arg_key>".repeat(n) }));
  });

  it("reads GLM pairs as the regex did, a key holding a `</arg_key>` not followed by a value included", () => {
    const tools = [tool("f", { a: { type: "string" }, b: { type: "string" } })];
    const r = rewriteToolCalls({
      tools,
      text: "<tool_call>f<arg_key>a</arg_key><arg_key>x</arg_key> \n<arg_value>1</arg_value><arg_key>b</arg_key><arg_value>2</arg_value></tool_call>",
    });
    // The key runs to the `</arg_key>` a value follows; it is not declared, so its value is read as JSON.
    const args = JSON.parse(r.tool_calls[0]!.function.arguments);
    expect(args).toEqual({ "a</arg_key><arg_key>x": 1, b: "2" });
  });

  it("looks for </function> once for all of 40,000 opening tags, not once per tag", () => {
    // A closing-tag indexOf per opening tag: `<tool_call>` + 40,000 × `<function=a>` took 11 s.
    expectLinear(4_000, (n) => parseQwenXmlCalls("<function=a>".repeat(n), false));
  });

  it("reads `<function=` followed by a flood of spaces in linear time", () => {
    // `=([^>\n]*)\s*>`: both parts take spaces, so refusing one opening tag was quadratic.
    expectLinear(2_000, (n) => parseQwenXmlCalls("<function=" + " ".repeat(n) + "x", false));
  });

  it("reads parameters whose attributes never close in linear time", () => {
    expectLinear(1_000, (n) => rewriteToolCalls({ tools: [tool("a")], text: '<minimax:tool_call><invoke name="a">' + '<parameter name="a" '.repeat(n) }));
  });

  it("reads MiniMax-M3 elements nested without end, without overflowing the stack", () => {
    const ns = "]<]minimax[>[";
    const nested = (n: number) => `${ns}<invoke name="a">` + `${ns}<b>`.repeat(n);
    expect(() => parseMinimaxM3Calls(nested(20_000), false)).not.toThrow();
    expectLinear(4_000, (n) => parseMinimaxM3Calls(nested(n), false));
  });

  it("reads many MiniMax-M3 calls none of which closes in linear time", () => {
    expectLinear(2_000, (n) => parseMinimaxM3Calls('<invoke name="a">'.repeat(n), false));
  });

  it("reads sibling MiniMax-M3 elements of distinct names in linear time", () => {
    const ns = "]<]minimax[>[";
    const siblings = (n: number) => `${ns}<invoke name="a">` + Array.from({ length: n }, (_, i) => `${ns}<k${i}>v${ns}</k${i}>`).join("");
    expectLinear(1_000, (n) => parseMinimaxM3Calls(siblings(n), false));
  });
});

describe("finding 4: tool names", () => {
  it("never edit-distances a name longer than a declared name may be", () => {
    // A 20,000-character declared name against a near miss ran a 20,000 × 20,000 edit distance.
    const prepared = (name: string) => ({ name, folded: foldName(name) });
    expectLinear(1_000, (n) => resolveToolName("a".repeat(n - 1) + "b", [prepared("a".repeat(n))], true));
    expect(resolveToolName("a".repeat(MAX_TOOL_NAME_LENGTH + 1), [prepared("a".repeat(MAX_TOOL_NAME_LENGTH))], true)).toBeNull();
  });

  it("still matches a near miss within the cap", () => {
    const prepared = (name: string) => ({ name, folded: foldName(name) });
    const long = "x".repeat(MAX_TOOL_NAME_LENGTH - 1) + "y";
    expect(resolveToolName("get_wether", [prepared("get_weather"), prepared("get_time")], true)?.tool.name).toBe("get_weather");
    expect(resolveToolName("x".repeat(MAX_TOOL_NAME_LENGTH), [prepared(long)], true)?.tool.name).toBe(long);
  });

  it("computes a bounded edit distance exactly up to its limit", () => {
    const full = (a: string, b: string): number => {
      let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
      for (let i = 1; i <= a.length; i++) {
        const row = [i];
        for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
        prev = row;
      }
      return prev[b.length]!;
    };
    let seed = 7;
    const rand = (k: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % k);
    for (let t = 0; t < 500; t++) {
      const word = (len: number) => Array.from({ length: len }, () => "abc"[rand(3)]).join("");
      const a = word(rand(12));
      const b = word(rand(12));
      const limit = rand(6);
      const d = full(a, b);
      expect(editDistanceWithin(a, b, limit), `${a} ${b} ${limit}`).toBe(d <= limit ? d : limit + 1);
    }
  });

  it("spends a bounded amount on many long near-miss names against many tools", () => {
    // Each distinct 128-character near miss against 512 tools of 128 characters was a full edit
    // distance per tool (about 0.3 s a call): 100 calls took half a minute. A generous budget:
    const tools = Array.from({ length: 512 }, (_, i) => tool(`tool_${String(i).padStart(3, "0")}_${"ab".repeat(58)}`));
    const calls = Array.from({ length: 100 }, (_, i) => `<tool_call>{"name": "tool_${String(i).padStart(3, "0")}_${"ba".repeat(58)}", "arguments": {}}</tool_call>`).join("\n");
    expect(timeMs(() => rewriteToolCalls({ tools, text: calls }))).toBeLessThan(3_000);
  });
});

describe("the rest of the sweep", () => {
  it("refuses a long number that does not end the value in linear time", () => {
    // `\d[\d_]*\.?[\d_]*` split a run of digits two ways at every point.
    const tools = [tool("f", { a: { type: "number" } })];
    expectLinear(2_000, (n) => rewriteToolCalls({ tools, text: "<tool_call>f<arg_key>a</arg_key><arg_value>" + "1".repeat(n) + "x</arg_value></tool_call>" }));
  });

  it("reads an object of many distinct keys in linear time", () => {
    expectLinear(2_000, (n) => parseJson("{" + Array.from({ length: n }, (_, i) => `"k${i}":1`).join(",") + "}"));
  });

  it("scores a call with a problem for each of 150,000 keys without overflowing the stack", () => {
    // `problems.push(...coerced.problems)` passed every problem as an argument.
    const args = "{" + Array.from({ length: 150_000 }, (_, i) => `"k${i}":"1"`).join(",") + "}";
    const tools = [tool("f")];
    tools[0]!.function.parameters = { type: "object", additionalProperties: { type: "integer" } };
    let problems: Array<{ code: string; message: string }> = [];
    expect(() => {
      problems = rewriteToolCalls({ tools, text: `<tool_call>{"name": "f", "arguments": ${args}}</tool_call>` }).tool_calls[0]!.problems;
    }).not.toThrow();
    // 64 are listed (score-call.ts, MAX_LISTED_PROBLEMS), the last problem counts the rest.
    expect(problems).toHaveLength(65);
    expect(problems.at(-1)).toMatchObject({ code: "problems_truncated", message: `${150_000 - 64} more problems not listed` });
  }, 60_000);

  it("asks whether a line's first word may become a tool name without a pass over every tool", () => {
    // Each line's first word was compared with all 512 declared names: about 5 s a megabyte.
    const tools = Array.from({ length: 512 }, (_, i) => tool(`t${i}_${"x".repeat(100)}`));
    const size = 128_000;
    rewriteToolCalls({ tools, text: "a\n".repeat(1_000) });
    const prose = Math.min(...[0, 1].map(() => timeMs(() => rewriteToolCalls({ tools, text: "tool talk ".repeat(size / 10) }))));
    // The best of two, as for prose: one run beside the type checker took 142 ms against a bound of 140
    // (the pass over every tool, ~5 s a megabyte, would take ~640 ms at this size).
    const lines = Math.min(...[0, 1].map(() => timeMs(() => rewriteToolCalls({ tools, text: "a\n".repeat(size / 2) }))));
    expect(lines, `prose ${prose.toFixed(1)} ms, a line per letter ${lines.toFixed(1)} ms`).toBeLessThan(20 * prose + 100);
  });

  it("finds the region's end as far as its next marker, not the whole text's length", () => {
    // A marker every few characters of a text handed over at once: each region copied all the
    // text after it, and a repeated opener with no closer read each one to the end of the text.
    for (const marker of ["<tools>", "<｜tool▁calls▁begin｜>", "<|tool_calls_section_begin|>", "<tool_calls:opensource>"]) {
      expectLinear(2_000, (n) => rewriteToolCalls({ tools: [tool("f")], text: marker.repeat(n) }));
    }
  });

  it("does not hand jsonrepair a value nested deeper than the strict reader goes", () => {
    expectLinear(8_000, (n) => rewriteToolCalls({ tools: [tool("f")], text: "functools[" + "{".repeat(n) }));
    expectLinear(8_000, (n) => rewriteToolCalls({ tools: [tool("f")], text: '[{"name": "f", "arguments": ' + "{".repeat(n) }));
  });

  it("reads `Action:` fences repeated without recursing once per line", () => {
    const tools = [tool("f")];
    expect(() => rewriteToolCalls({ tools, text: "Action: ```json\n".repeat(20_000) })).not.toThrow();
    expectLinear(2_000, (n) => rewriteToolCalls({ tools, text: "Action: ```json\n".repeat(n) }));
  });

  it("reads whitespace streaming in after a call's value once", () => {
    const run = (n: number) => {
      const rw = new ToolCallStreamRewriter([tool("f")], {});
      rw.push('<tool_call>{"name": "f", "arguments": {}}');
      for (let i = 0; i < n / 16; i++) rw.push(" ".repeat(16));
      rw.push("x");
      rw.flush();
    };
    expectLinear(8_000, run);
  });

  it("reads whitespace streaming in after a pythonic call once", () => {
    const run = (n: number) => {
      const rw = new ToolCallStreamRewriter([tool("f")], {});
      rw.push("f(a=1)");
      for (let i = 0; i < n / 16; i++) rw.push(" ".repeat(16) as string);
      rw.push("x");
      rw.flush();
    };
    expectLinear(8_000, run);
  });
});
