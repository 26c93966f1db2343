// A client's own regular expressions (pattern, patternProperties, propertyNames) against long
// near-miss keys and values the model wrote: they must never run on a backtracking engine (issue
// 26, finding 2). Plus schemas that are merely large: many tools, many properties.

import { describe, expect, it } from "vitest";
import { rewriteToolCalls, type JsonSchema, type ToolDefinition } from "../toolcalls/imports.ts";
import { climb, describeSteps, overBudget } from "./budget.ts";
import { climbCases } from "./climb-cases.ts";
import { flood } from "./hostile-text.ts";

/** Catastrophic regexes, each with the near-miss text of length k that makes V8's engine backtrack 2^k ways. */
const CATASTROPHIC: Array<[regex: string, nearMiss: (k: number) => string]> = [
  ["^(a+)+$", (k) => "a".repeat(k) + "!"],
  ["(a|a)*b", (k) => "a".repeat(k)],
  ["(x+x+)+y", (k) => "x".repeat(k)],
];

/** Where a client's regex can sit in a tool's parameters, and the call arguments that reach it. */
const PLACEMENTS: Record<string, (re: string, text: string) => [JsonSchema, Record<string, unknown>]> = {
  "patternProperties": (re, t) => [{ type: "object", patternProperties: { [re]: {} } }, { [t]: 1 }],
  "pattern of a property": (re, t) => [{ type: "object", properties: { s: { type: "string", pattern: re } } }, { s: t }],
  "propertyNames": (re, t) => [{ type: "object", propertyNames: { pattern: re } }, { [t]: 1 }],
  "pattern of array items": (re, t) => [{ type: "object", properties: { s: { type: "array", items: { type: "string", pattern: re } } } }, { s: [t, t] }],
  "pattern of additionalProperties": (re, t) => [{ type: "object", additionalProperties: { type: "string", pattern: re } }, { s: t }],
  "pattern behind a $ref": (re, t) => [{ type: "object", $defs: { p: { type: "string", pattern: re } }, properties: { s: { $ref: "#/$defs/p" } } }, { s: t }],
  "pattern in an anyOf branch": (re, t) => [{ type: "object", properties: { s: { anyOf: [{ type: "integer" }, { type: "string", pattern: re }] } } }, { s: t }],
  "patternProperties of a nested object": (re, t) => [{ type: "object", properties: { o: { type: "object", patternProperties: { [re]: { type: "integer" } } } } }, { o: { [t]: 1 } }],
};

/** The placements whose near miss is a top-level key, so one call can carry many of them. */
const KEYED = new Set(["patternProperties", "propertyNames"]);

const tool = (parameters: JsonSchema): ToolDefinition[] => [{ type: "function", function: { name: "f", parameters } }];
const callText = (args: Record<string, unknown>) => `<tool_call>{"name": "f", "arguments": ${JSON.stringify(args)}}</tool_call>`;

// Near-miss lengths ×16 the backtracking work a step: a case within budget at 24 costs at most a
// few seconds at 28 on the old engine, never hours.
const LENGTHS = [12, 16, 20, 24, 28];

describe("a client's regex against model-written near misses", () => {
  for (const [re, nearMiss] of CATASTROPHIC) {
    for (const [placement, build] of Object.entries(PLACEMENTS)) {
      it(`${re} as ${placement}`, () => {
        const run = (k: number) => {
          const [parameters, args] = build(re, nearMiss(k));
          rewriteToolCalls({ tools: tool(parameters), text: callText(args) });
        };
        const steps = climb(LENGTHS, run, 0, (k) => callText(build(re, nearMiss(k))[1]).length);
        expect(overBudget(steps), describeSteps(steps)).toBeUndefined();
        if (!KEYED.has(placement)) return;
        // Then many such near-miss keys in one call: the regexes' cost is linear in the keys' total.
        const many = (n: number) => {
          const args: Record<string, unknown> = {};
          for (let i = 0; i < n; i++) Object.assign(args, build(re, nearMiss(28) + "a".repeat(i % 7) + String(i))[1]);
          return args;
        };
        const bulk = climb([100, 400, 1600], (n) => {
          const [parameters] = build(re, "");
          rewriteToolCalls({ tools: tool(parameters), text: callText(many(n)) });
        }, 0, (n) => callText(many(n)).length);
        expect(overBudget(bulk), describeSteps(bulk)).toBeUndefined();
      });
    }
  }
});

/** One tool with `n` string properties, all required. */
const wide = (n: number): ToolDefinition[] => {
  const properties: Record<string, JsonSchema> = {};
  for (let i = 0; i < n; i++) properties[`p${i}`] = { type: "string", enum: ["a", "b"] };
  return [{ type: "function", function: { name: "f", parameters: { type: "object", properties, required: Object.keys(properties) } } }];
};
/** `n` small tools. */
const manyTools = (n: number): ToolDefinition[] =>
  Array.from({ length: n }, (_, i) => ({ type: "function", function: { name: `tool_${i}`, parameters: { type: "object", properties: { q: { type: "string" } } } } }));

describe("large schemas, each within the budget for the size of the request", () => {
  it("one tool with many properties, a call with all of them wrong", () => {
    const text = (n: number) => callText(Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, 7])));
    const steps = climb([250, 1000, 4000, 16000], (n) => rewriteToolCalls({ tools: wide(n), text: text(n) }), 0, (n) => JSON.stringify(wide(n)).length + text(n).length);
    expect(overBudget(steps), describeSteps(steps)).toBeUndefined();
  });

  it("many tools, calls to the last one and to a near miss of it", () => {
    const text = (n: number) => `<tool_call>{"name": "tool_${n - 1}", "arguments": {"q": "a"}}</tool_call><tool_call>{"name": "tool__${n - 1}x", "arguments": {}}</tool_call>`;
    const steps = climb([250, 1000, 4000, 16000], (n) => rewriteToolCalls({ tools: manyTools(n), text: text(n) }), 0, (n) => JSON.stringify(manyTools(n)).length);
    expect(overBudget(steps), describeSteps(steps)).toBeUndefined();
  });
});

describe("prose against large tool sets", () => {
  climbCases({
    "a long answer with 2,000 tools declared": { text: (n) => flood("", "The answer is tool_12 or tool_13, not {x}. ", n), tools: manyTools(2000), oneChar: false },
  });
});
