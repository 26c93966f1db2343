// Issue 26, finding 2: a client's `pattern` and `patternProperties` run on RE2 (linear time),
// never on V8's backtracking RegExp against what the model wrote; a pattern RE2 cannot run is
// reported unchecked (the informational `pattern_unchecked`), never a false problem.

import { describe, expect, it } from "vitest";
import { rewriteToolCalls, type JsonSchema, type ToolDefinition } from "./imports.ts";
import { clientPattern, compileClientPattern, MAX_CLIENT_PATTERN_LENGTH, MAX_CLIENT_PATTERNS_PER_SCHEMA } from "../../../src/toolcalls/scoring/client-pattern.ts";

const tool = (parameters: JsonSchema): ToolDefinition[] => [{ type: "function", function: { name: "f", parameters } }];

/** The problems of the one call to `f` with `args`, as [code, path]. */
function problemsOf(parameters: JsonSchema, args: Record<string, unknown>): Array<[string, string | undefined]> {
  const text = `<tool_call>{"name": "f", "arguments": ${JSON.stringify(args)}}</tool_call>`;
  const r = rewriteToolCalls({ tools: tool(parameters), text });
  expect(r.tool_calls).toHaveLength(1);
  return r.tool_calls[0]!.problems.map((p) => [p.code, p.path]);
}

const timed = (run: () => void): number => {
  const t0 = performance.now();
  run();
  return performance.now() - t0;
};

/** How long a near miss is: 2^40 ways for a backtracking engine to fail `^(a+)+$` (hours). */
const K = 40;
const NEAR_MISS = "a".repeat(K) + "!";

describe("a catastrophic client regex against a model-written near miss", () => {
  const cases: Record<string, [JsonSchema, Record<string, unknown>]> = {
    "patternProperties": [{ type: "object", patternProperties: { "^(a+)+$": { type: "integer" } } }, { [NEAR_MISS]: 1, aaaa: "x" }],
    "patternProperties with additionalProperties: false": [{ type: "object", patternProperties: { "^(a+)+$": {} }, additionalProperties: false }, { [NEAR_MISS]: 1 }],
    "pattern of a property": [{ type: "object", properties: { s: { type: "string", pattern: "^(a+)+$" } } }, { s: NEAR_MISS }],
    "pattern in an anyOf branch": [{ type: "object", properties: { s: { anyOf: [{ type: "integer" }, { type: "string", pattern: "^(a+)+$" }] } } }, { s: NEAR_MISS }],
    "propertyNames": [{ type: "object", propertyNames: { pattern: "^(a+)+$" } }, { [NEAR_MISS]: 1 }],
    "pattern behind a $ref": [{ type: "object", $defs: { p: { type: "string", pattern: "^(a+)+$" } }, properties: { s: { $ref: "#/$defs/p" } } }, { s: NEAR_MISS }],
  };
  for (const [name, [parameters, args]] of Object.entries(cases)) {
    it(`${name}: answered at once, and the pattern still holds`, () => {
      let problems: Array<[string, string | undefined]> = [];
      const ms = timed(() => (problems = problemsOf(parameters, args)));
      expect(ms).toBeLessThan(500);
      // The near miss does not match: a key outside the patterns is unknown, a value is a violation
      // (and a key the pattern matches still gets its schema: `aaaa` must be an integer).
      expect(problems.some(([code]) => code === "unknown_property" || code === "schema_violation" || code === "wrong_type")).toBe(true);
      expect(problems.map(([code]) => code)).not.toContain("pattern_unchecked");
    });
  }

  it("a library format whose own regex backtracks (url) is not run on model text", () => {
    const ms = timed(() => problemsOf({ type: "object", properties: { u: { type: "string", format: "url" } } }, { u: "http://" + "a".repeat(K) + "!" }));
    expect(ms).toBeLessThan(500);
  });
});

describe("ordinary client patterns are still enforced", () => {
  const lower: JsonSchema = { type: "object", properties: { s: { type: "string", pattern: "^[a-z]+$" } } };

  it("^[a-z]+$ rejects A1 and accepts abc", () => {
    expect(problemsOf(lower, { s: "A1" })).toEqual([["schema_violation", "/s"]]);
    expect(problemsOf(lower, { s: "abc" })).toEqual([]);
  });

  it("patternProperties choose the keys' schemas and decide which keys are additional", () => {
    const schema: JsonSchema = { type: "object", patternProperties: { "^x_": { type: "integer" } }, additionalProperties: false };
    expect(problemsOf(schema, { x_a: 1, x_b: 2 })).toEqual([]);
    expect(problemsOf(schema, { x_a: "one" })).toEqual([["wrong_type", "/x_a"]]);
    expect(problemsOf(schema, { x_a: 1, y: 2 }).map(([code, path]) => `${code} ${path}`)).toContain("unknown_property /y");
  });

  it("patterns mean what they meant under not, oneOf and items", () => {
    const not: JsonSchema = { type: "object", properties: { s: { type: "string", not: { pattern: "^a" } } } };
    expect(problemsOf(not, { s: "abc" }).map(([code]) => code)).toEqual(["schema_violation"]);
    expect(problemsOf(not, { s: "bcd" })).toEqual([]);
    const oneOf: JsonSchema = { type: "object", properties: { s: { oneOf: [{ type: "string", pattern: "^a" }, { type: "string", pattern: "^b" }] } } };
    expect(problemsOf(oneOf, { s: "apple" })).toEqual([]);
    expect(problemsOf(oneOf, { s: "cherry" }).map(([code]) => code)).toEqual(["schema_violation"]);
    const items: JsonSchema = { type: "object", properties: { l: { type: "array", items: { type: "string", pattern: "^\\d{3}$" } } } };
    expect(problemsOf(items, { l: ["123", "456"] })).toEqual([]);
    expect(problemsOf(items, { l: ["123", "45x"] })).toEqual([["schema_violation", "/l/1"]]);
  });

  it("ECMA-262's meaning: \\s takes Unicode spaces, . stops at a line break, \\u escapes, [^] and []", () => {
    const match = (pattern: string, text: string) => compileClientPattern(pattern)!.test(text);
    expect(match("^a\\sb$", "a\u00a0b")).toBe(true);
    expect(match("^a.b$", "a\nb")).toBe(false);
    expect(match("^a[^]b$", "a\nb")).toBe(true);
    expect(match("a[]", "a")).toBe(false);
    expect(match("^\\u00e9\\u{1F600}$", "é😀")).toBe(true);
    expect(match("^\\uD83D\\uDE00$", "😀")).toBe(true);
    expect(match("^\\u{1234}$", "\u1234")).toBe(true);
    expect(match("^[\\s\\d]+$", "1 2\u3000")).toBe(true);
    // `[` in a class is itself in ECMA-262 (RE2 would read `[:alpha:]` there).
    expect(match("^[[a]+$", "[a")).toBe(true);
    expect(match("abc$", "abc\n")).toBe(false);
  });
});

describe("patterns RE2 cannot run are reported unchecked, never a problem", () => {
  it("a lookahead pattern checks nothing and says so", () => {
    const schema: JsonSchema = { type: "object", properties: { s: { type: "string", pattern: "^(?=a)a+$" } } };
    expect(problemsOf(schema, { s: "bbb" })).toEqual([["pattern_unchecked", undefined]]);
    const r = rewriteToolCalls({ tools: tool(schema), text: '<tool_call>{"name": "f", "arguments": {"s": "bbb"}}</tool_call>' });
    expect(r.tool_calls[0]!.score).toBe(1);
  });

  it("a lookbehind in patternProperties declares every key: no unknown_property", () => {
    const schema: JsonSchema = { type: "object", patternProperties: { "(?<=x)_": { type: "integer" } }, additionalProperties: false };
    expect(problemsOf(schema, { x_a: "not checked", y: 1 })).toEqual([["pattern_unchecked", undefined]]);
  });

  it("a backreference, a pattern past the length cap, an invalid one", () => {
    expect(compileClientPattern("^(a)\\1$")).toBeNull();
    expect(compileClientPattern("a".repeat(MAX_CLIENT_PATTERN_LENGTH + 1))).toBeNull();
    expect(compileClientPattern("a".repeat(MAX_CLIENT_PATTERN_LENGTH))).not.toBeNull();
    expect(compileClientPattern("(")).toBeNull();
    // Counted repetitions that unroll into a large program: costly to compile and to run.
    expect(compileClientPattern("[ab]{999}c")).toBeNull();
    expect(compileClientPattern("(?:(?:a|b){30}){30}")).toBeNull();
    expect(compileClientPattern("^[a-zA-Z0-9_-]{1,64}$")).not.toBeNull();
  });

  it("compiles each pattern once per schema, and at most MAX_CLIENT_PATTERNS_PER_SCHEMA of them", () => {
    const root = {};
    const first = clientPattern(root, "^a+$");
    expect(first).not.toBeNull();
    expect(clientPattern(root, "^a+$")).toBe(first);
    for (let i = 1; i < MAX_CLIENT_PATTERNS_PER_SCHEMA; i++) expect(clientPattern(root, `^a${i}$`)).not.toBeNull();
    expect(clientPattern(root, "^one too many$")).toBeNull();
    expect(clientPattern({}, "^one too many$")).not.toBeNull();
  });
});
