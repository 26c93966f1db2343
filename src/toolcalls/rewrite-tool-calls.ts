// One-shot rewriting of a complete output: the core of POST /v1/tool_calls/rewrite. It runs the
// stream rewriter over the whole text, so both paths find the same calls by construction.

import { openerClosedAhead } from "./prompt/prompt-state.ts";
import { ToolCallStreamRewriter } from "./scan/stream-rewriter.ts";
import type { RewriteOptions } from "./scan/rewrite-options.ts";
import type { ScoredToolCall, ToolDefinition } from "./scoring/types.ts";

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

/**
 * The template opened a reasoning block the output never opens: `…reasoning…</think>answer`.
 * A stream must be told (`startInReasoning`); a complete text shows it.
 */
export function startsInsideReasoning(text: string): boolean {
  return openerClosedAhead(text) !== null;
}

export function rewriteToolCalls(request: RewriteRequest): RewriteResult {
  const { tools, text, finish_reason, ...options } = request;
  const rewriter = new ToolCallStreamRewriter(tools, {
    ...options,
    startInReasoning: options.startInReasoning ?? (options.generationPrompt === undefined ? openerClosedAhead(text) ?? false : undefined),
  });
  let content = "";
  let reasoning = "";
  for (const e of [...rewriter.push(text), ...rewriter.flush(finish_reason ?? "stop")]) {
    if (e.type === "text") content += e.delta;
    else if (e.type === "reasoning") reasoning += e.delta;
  }
  const result: RewriteResult = { content: content === "" ? null : content, tool_calls: rewriter.toolCalls };
  if (reasoning !== "") result.reasoning_content = reasoning;
  return result;
}
