// What a caller may tell the rewriter about the output it reads (public: exported from index.ts and
// documented in docs/tool-calls.md).

import type { ToolChoice } from "../scoring/types.ts";

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
