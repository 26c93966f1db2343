// Issue 26: jsonrepair re-copies its output at each comma it inserts, so model-written JSON with many
// missing commas (`{"a": [1 1 1 …]}`) cost the square of its length: 86 ms at 32 KB, 4 s at 128 KB.
// Only text up to MAX_REPAIR_LENGTH goes to it now; longer text gets one linear repair (raw control
// characters in strings) or is unparseable. The larger input may cost at most 2.5 × 4 times the
// smaller plus 100 ms; the old code grew about 40×.

import { describe, expect, it } from "vitest";
import { MAX_REPAIR_LENGTH, readJsonLenient } from "../../../src/toolcalls/json/read-json-lenient.ts";
import { rewriteToolCalls, type ToolDefinition } from "./imports.ts";

function timeMs(run: () => void): number {
  const t0 = performance.now();
  run();
  return performance.now() - t0;
}

/** Times `run(n)` (best of two, after a warm-up) and `run(4n)` once, and bounds the growth. */
function expectLinear(n: number, run: (n: number) => void): void {
  for (let i = 0, spent = 0; i < 5 && spent < 50; i++) spent += timeMs(() => run(n));
  const small = Math.min(timeMs(() => run(n)), timeMs(() => run(n)));
  const large = timeMs(() => run(4 * n));
  expect(large, `n=${n}: ${small.toFixed(1)} ms, 4n: ${large.toFixed(1)} ms`).toBeLessThan(2.5 * 4 * small + 100);
}

/** `{"a": [1 1 1 …]}` about `n` characters long: a comma missing every two characters. */
const missingCommas = (n: number) => `{"a": [${"1 ".repeat(n / 2)}]}`;

const tool: ToolDefinition = { type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "array" } } } } };

describe("model-written JSON that needs repair", () => {
  it("with a comma missing every two characters is read in linear time", () => {
    expectLinear(32 * 1024, (n) => readJsonLenient(missingCommas(n)));
  });

  it("as a tool call's arguments is rewritten in linear time", () => {
    const text = (n: number) => `<tool_call>{"name": "f", "arguments": ${missingCommas(n)}}</tool_call>`;
    expectLinear(32 * 1024, (n) => rewriteToolCalls({ tools: [tool], text: text(n) }));
  });

  it("is still repaired by jsonrepair up to MAX_REPAIR_LENGTH characters", () => {
    const fits = missingCommas(MAX_REPAIR_LENGTH - 16);
    expect(fits.length).toBeLessThanOrEqual(MAX_REPAIR_LENGTH);
    const read = readJsonLenient(fits);
    expect(read?.repaired).toBe(true);
    expect(read?.node.kind).toBe("object");
    expect(readJsonLenient(missingCommas(MAX_REPAIR_LENGTH + 16))).toBeNull();
  });

  it("longer than MAX_REPAIR_LENGTH still has raw newlines and tabs in its strings escaped", () => {
    const content = "line\twith a tab\n".repeat(MAX_REPAIR_LENGTH / 8);
    const read = readJsonLenient(`{"path": "a.txt", "content": "${content}"}`);
    expect(read?.repaired).toBe(true);
    const entry = read?.node.kind === "object" ? read.node.entries.find((e) => e.key === "content") : undefined;
    expect(entry?.value).toMatchObject({ kind: "string", value: content });
  });
});
