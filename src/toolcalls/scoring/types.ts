// Public types of the tool-call engine: the tools a request declares and the scored calls it answers
// with. Wire shapes follow OpenAI's chat completions API; everything Switchyard adds (score, problems)
// is documented in docs/tool-calls.md. The rewriter's options are in scan/rewrite-options.ts.

/** A JSON Schema object as clients send it in `tools[].function.parameters`. */
export type JsonSchema = { [key: string]: unknown };

export interface ToolDefinition {
  type: "function";
  function: {
    name: string;
    description?: string;
    parameters?: JsonSchema;
    strict?: boolean | null;
  };
}

export type ToolChoice =
  | "none"
  | "auto"
  | "required"
  | { type: "function"; function: { name: string } };

export type ProblemCode =
  | "json_repaired"
  | "truncated"
  | "missing_closing_tag"
  | "arguments_double_encoded"
  | "arguments_not_object"
  | "positional_argument"
  | "name_case_mismatch"
  | "name_separator_mismatch"
  | "name_fuzzy_match"
  | "missing_required"
  | "wrong_type"
  | "enum_mismatch"
  | "unknown_property"
  | "schema_violation"
  | "coerced_type"
  | "unknown_tool_dropped"
  | "extra_calls_dropped"
  | "echo_dropped"
  | "pattern_unchecked"
  | "problems_truncated";

export interface ToolCallProblem {
  code: ProblemCode;
  message: string;
  /** JSON Pointer into the arguments (`/city`, `/items/0`), when the problem is about one value. */
  path?: string;
  /** How much this problem lowers the score: score = Π(1 − penalty). */
  penalty: number;
}

export interface ScoredToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
  /** 1 for a clean, schema-valid call; lower for every problem found. */
  score: number;
  problems: ToolCallProblem[];
}

/** What the encoder puts in `x_switchyard.tool_calls`. */
export interface ToolCallReport {
  index: number;
  id: string;
  score: number;
  problems: ToolCallProblem[];
}
