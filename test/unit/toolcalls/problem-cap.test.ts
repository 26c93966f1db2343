// A call lists at most MAX_LISTED_PROBLEMS problems and counts the rest in one `problems_truncated`
// (issue 26): arguments with thousands of wrong values are not answered with a problem list several
// times their size. The score still counts every problem.

import { describe, expect, it } from "vitest";
import { MAX_LISTED_PROBLEMS } from "../../../src/toolcalls/scoring/score-call.ts";
import { rewriteToolCalls, type JsonSchema, type ToolDefinition } from "./imports.ts";

/** One tool with `n` required integer properties, and a call giving each a word (no coercion reads it). */
function allWrong(n: number) {
  const properties: Record<string, JsonSchema> = {};
  for (let i = 0; i < n; i++) properties[`p${i}`] = { type: "integer" };
  const tools: ToolDefinition[] = [{ type: "function", function: { name: "f", parameters: { type: "object", properties, required: Object.keys(properties) } } }];
  const args = Object.fromEntries(Object.keys(properties).map((k) => [k, "seven"]));
  return rewriteToolCalls({ tools, text: `<tool_call>{"name": "f", "arguments": ${JSON.stringify(args)}}</tool_call>` }).tool_calls[0]!;
}

describe("the problems a call lists", () => {
  it("are all listed up to the cap", () => {
    const call = allWrong(MAX_LISTED_PROBLEMS);
    expect(call.problems.map((p) => p.code)).toEqual(Array(MAX_LISTED_PROBLEMS).fill("wrong_type"));
  });

  it("past the cap, are the first MAX_LISTED_PROBLEMS and a count of the rest; the score counts them all", () => {
    const call = allWrong(1000);
    expect(call.problems).toHaveLength(MAX_LISTED_PROBLEMS + 1);
    expect(call.problems.slice(0, MAX_LISTED_PROBLEMS).every((p) => p.code === "wrong_type")).toBe(true);
    expect(call.problems[0]!.path).toBe("/p0");
    expect(call.problems.at(-1)).toMatchObject({ code: "problems_truncated", message: `${1000 - MAX_LISTED_PROBLEMS} more problems not listed`, penalty: 0 });
    // 0.7^64 is about 1e-10; 0.7^1000 is 0 in doubles.
    expect(call.score).toBeLessThan(1e-20);
  });
});
