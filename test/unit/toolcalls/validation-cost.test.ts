// Issue 26: turning a call's schema errors into problems is linear in the number of errors. Each
// error used to search every other error (for the ones nested in it), so a call with many
// unknown keys, or many values failing an anyOf, cost the square of their number.

import { describe, expect, it } from "vitest";
import { rewriteToolCalls, type JsonSchema, type ToolDefinition } from "./imports.ts";

const tool = (parameters: JsonSchema): ToolDefinition[] => [{ type: "function", function: { name: "f", parameters } }];
const callText = (args: string) => `<tool_call>{"name": "f", "arguments": ${args}}</tool_call>`;

function timeMs(run: () => void): number {
  const t0 = performance.now();
  run();
  return performance.now() - t0;
}

/** n and 4n: the larger within 10× the smaller plus 50 ms (linear grows 4×, quadratic 16×). */
function expectLinear(n: number, run: (n: number) => void): void {
  run(n);
  const small = Math.min(timeMs(() => run(n)), timeMs(() => run(n)));
  const large = timeMs(() => run(4 * n));
  expect(large, `${n}: ${small.toFixed(1)} ms, ${4 * n}: ${large.toFixed(1)} ms`).toBeLessThan(10 * small + 50);
}

describe("schema errors become problems in linear time", () => {
  it("many unknown keys against additionalProperties: false", () => {
    const schema: JsonSchema = { type: "object", properties: {}, additionalProperties: false };
    const args = (n: number) => "{" + Array.from({ length: n }, (_, i) => `"k${i}": 1`).join(", ") + "}";
    const r = rewriteToolCalls({ tools: tool(schema), text: callText(args(3)) });
    expect(r.tool_calls[0]!.problems.map((p) => [p.code, p.path])).toEqual([
      ["unknown_property", "/k0"],
      ["unknown_property", "/k1"],
      ["unknown_property", "/k2"],
    ]);
    expectLinear(6_000, (n) => rewriteToolCalls({ tools: tool(schema), text: callText(args(n)) }));
  });

  it("many values failing an anyOf, each reported once as a wrong type", () => {
    const schema: JsonSchema = { type: "object", properties: { l: { type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } } } };
    const args = (n: number) => JSON.stringify({ l: Array.from({ length: n }, (_, i) => (i % 2 === 0 ? true : "ok")) });
    const r = rewriteToolCalls({ tools: tool(schema), text: callText(args(4)) });
    expect(r.tool_calls[0]!.problems.map((p) => [p.code, p.path])).toEqual([
      ["wrong_type", "/l/0"],
      ["wrong_type", "/l/2"],
    ]);
    expectLinear(4_000, (n) => rewriteToolCalls({ tools: tool(schema), text: callText(args(n)) }));
  });
});
