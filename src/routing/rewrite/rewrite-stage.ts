// The tool-call rewrite stage: every answer an attempt produces passes through here, and only here,
// on its way to the encoder — the tools' calls read from the text (a model's markup becomes real
// tool_calls), or, for raw text with no tools, only reasoning split off and the framing dropped.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { EventPull } from "../../events/event-source.ts";
import type { UpstreamEvent } from "../../events/events.ts";
import { pullThrough } from "../../events/pull-through.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { ToolCallReport } from "../../toolcalls/index.ts";
import { toolCallEventsFor } from "./rewrite-context.ts";

/** An answer as an attempt produced it: its first event and the rest. */
export interface Answer {
  first: UpstreamEvent;
  events: EventPull;
  /** Set when the events are the model's output as written (a chat parser refused it): the end of the prompt it continues. */
  raw?: { generationPrompt: string };
}

/** An answer after the rewrite: its events, and the scores of the calls read so far. */
export interface RewrittenAnswer {
  first: UpstreamEvent;
  events: EventPull;
  /** Scores so far (complete once the finish event has passed). */
  reports(): ToolCallReport[];
}

/** Whether `request`'s answers are read for tool calls (tools offered, and not `tool_choice: "none"`). */
export function offersTools(request: ChatRequest): boolean {
  return Boolean(request.tools?.length) && request.tool_choice !== "none";
}

/**
 * `answer` through the rewriter when it needs it (tools offered, or raw text); as it is otherwise.
 * Null when nothing is left of it (an answer of framing only).
 */
export async function rewriteAnswer(request: ChatRequest, answer: Answer): Promise<RewrittenAnswer | null> {
  if (!offersTools(request) && !answer.raw) return { first: answer.first, events: answer.events, reports: () => [] };
  const rewrite = toolCallEventsFor(request, answer.raw?.generationPrompt);
  // Tool calls written as text become real tool_calls; plain text still flows at once.
  const events = pullThrough(answer.first, answer.events, rewrite);
  const first = await events.next();
  if (!first) return null;
  return { first, events, reports: () => rewrite.toolCalls };
}

/** rewriteAnswer, with an answer that comes to nothing an error of `target` (the next target may do better). */
export async function rewriteOrFail(request: ChatRequest, answer: Answer, target: string): Promise<RewrittenAnswer> {
  const rewritten = await rewriteAnswer(request, answer);
  if (!rewritten) throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${target} ended its answer without sending anything.` });
  return rewritten;
}
