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
