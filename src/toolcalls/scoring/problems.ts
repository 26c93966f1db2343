// The problem codes a scored call can carry, with their penalties. Codes are a public contract
// (docs/tool-calls.md lists them); penalties may be tuned.

import type { ProblemCode, ToolCallProblem } from "./types.ts";

export const PENALTIES: Readonly<Record<ProblemCode, number>> = {
  // How the call was read.
  json_repaired: 0.15,
  truncated: 0.4,
  missing_closing_tag: 0.05,
  arguments_double_encoded: 0.1,
  arguments_not_object: 0.6,
  positional_argument: 0.2,
  // How the name matched a declared tool.
  name_case_mismatch: 0.05,
  name_separator_mismatch: 0.05,
  name_fuzzy_match: 0.25,
  // What the JSON Schema says about the arguments.
  missing_required: 0.3,
  wrong_type: 0.3,
  enum_mismatch: 0.25,
  unknown_property: 0.2,
  schema_violation: 0.15,
  coerced_type: 0.1,
  // Informational: something else in the output was dropped; this call itself is fine.
  unknown_tool_dropped: 0,
  extra_calls_dropped: 0,
  echo_dropped: 0,
  // Informational: a pattern of the schema applied and was not checked (client-pattern.ts).
  pattern_unchecked: 0,
  // Informational: the call had more problems than a call lists (score-call.ts, MAX_LISTED_PROBLEMS).
  problems_truncated: 0,
};

export function problem(code: ProblemCode, message: string, path?: string): ToolCallProblem {
  return path === undefined
    ? { code, message, penalty: PENALTIES[code] }
    : { code, message, path, penalty: PENALTIES[code] };
}

/** score = Π(1 − penalty), so every extra problem lowers the score and it never reaches below 0. */
export function scoreOf(problems: readonly ToolCallProblem[]): number {
  let score = 1;
  for (const p of problems) score *= 1 - Math.min(1, Math.max(0, p.penalty));
  return Math.round(score * 1000) / 1000;
}

/**
 * Appends every item of `items` to `list`. `list.push(...items)` passes each item as an argument,
 * and a call with tens of thousands of wrong keys overflowed the stack that way.
 */
export function appendAll<T>(list: T[], items: readonly T[]): void {
  for (const item of items) list.push(item);
}
