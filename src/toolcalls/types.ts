// Public types of the tool-call engine. Wire shapes follow OpenAI's chat completions API; everything
// Switchyard adds (score, problems) is documented in docs/tool-calls.md.

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

export interface RewriteOptions {
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  /**
   * The chat template already opened a reasoning block (`<think>` is in the prompt), so the output
   * starts inside it and only its closing marker appears. `true` means `<think>`; a string names the
   * opening marker (`[THINK]`, `<seed:think>`…; `reasoningOpenAtEnd(prompt)` finds it). The one-shot
   * rewriter detects `</think>` on its own; a stream cannot take back text it already sent, so tell it.
   */
  startInReasoning?: boolean | string;
  /**
   * The end of the rendered prompt the output continues (the template's assistant header, maybe an
   * opened reasoning block or Functionary's `>>>`). What it left open is where the output starts;
   * `startInReasoning`, when given, wins.
   */
  generationPrompt?: string;
  /**
   * The request asked for a JSON answer (`response_format`, llama.cpp's `json_schema`): a code fence
   * around the whole answer is removed, as llama.cpp does.
   */
  jsonResponse?: boolean;
  /** The output continues a prefilled assistant message: whitespace at its start is the message's. */
  continuation?: boolean;
  /**
   * `"none"` (llama.cpp's `reasoning_format: "none"`): reasoning blocks stay in `content` as the model
   * wrote them (calls inside them are still not read). Default: split off as `reasoning_content`.
   */
  reasoningFormat?: "split" | "none";
}

export interface RewriteRequest extends RewriteOptions {
  tools: readonly ToolDefinition[];
  text: string;
  /** Why the text ended (default `stop`); after `length` a call cut off inside is not a call. */
  finish_reason?: "stop" | "length";
}

export interface RewriteResult {
  content: string | null;
  reasoning_content?: string;
  tool_calls: ScoredToolCall[];
}
