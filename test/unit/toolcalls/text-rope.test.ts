import { describe, expect, it } from "vitest";
import { TextRope } from "../../../src/toolcalls/text/text-rope.ts";
import { BalancedScanner } from "../../../src/toolcalls/text/balanced-scanner.ts";
import { TOOLS } from "./fixtures.ts";
import { randomSplits, streamChunks } from "./helpers.ts";

describe("TextRope", () => {
  const text = 'prefix <tool_call>{"name": "x", "arguments": {"a": "}"}}</tool_call> suffix';
  const rope = (chunks: string[]) => {
    const r = new TextRope("IGNORED" + chunks[0]!, 7);
    for (const c of chunks.slice(1)) r.append(c);
    return r;
  };

  it("reads like the string it holds, however it was split", () => {
    for (let seed = 1; seed < 30; seed++) {
      const r = rope(randomSplits(text, seed, 5));
      expect(r.length).toBe(text.length);
      expect(r.slice(0)).toBe(text);
      expect(r.slice(5, 40)).toBe(text.slice(5, 40));
      for (const needle of ["</tool_call>", "<tool_call>", "suffix", "}}", "nope"]) {
        expect(r.indexOf(needle, 3)).toBe(text.indexOf(needle, 3));
      }
      expect([...Array(text.length).keys()].map((i) => r.charAt(i)).join("")).toBe(text);
      const rest = r.rest(20);
      expect(rest.text.slice(rest.pos)).toBe(text.slice(20));
    }
  });

  it("lets the bracket scanner find the same end as on the string", () => {
    const start = text.indexOf("{");
    const onString = new BalancedScanner(start).scan(text);
    for (let seed = 1; seed < 10; seed++) expect(new BalancedScanner(start).scan(rope(randomSplits(text, seed, 3)))).toBe(onString);
  });
});

describe("large calls stream in linear time", () => {
  it("a 200 kB argument fed in 4-character deltas", () => {
    const value = "x".repeat(200_000);
    const text = `<tool_call>{"name": "get_weather", "arguments": {"city": "${value}"}}</tool_call>`;
    const chunks = text.match(/[\s\S]{1,4}/g)!;
    const t0 = performance.now();
    const s = streamChunks(TOOLS, chunks);
    expect(JSON.parse(s.calls[0]![1]).city).toHaveLength(200_000);
    // Quadratic copying took seconds here; linear work takes well under one.
    expect(performance.now() - t0).toBeLessThan(1500);
  });
});
