// /v1/responses/compact: the request that has the model summarize a conversation, and the compacted
// response whose sealed summary the client sends in place of the turns it replaces.
import type { Sealer } from "./sealer.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import { randomId } from "../../lib/ids.ts";
import { compactionItem } from "./compaction-item.ts";

type Json = Record<string, unknown>;

/** What the model is asked, after the conversation, to write the summary that replaces it. */
export const COMPACTION_PROMPT =
  "Summarize the conversation so far for your own later use: the user's goals and constraints, what has been done (files, commands, results), decisions taken, and what remains to do. Be complete but concise; write only the summary.";

/**
 * Pure: the chat request that writes a compaction summary: the conversation as converted, no tools,
 * and the summary request as the last user turn.
 */
export function compactionRequest(chat: ChatRequest): ChatRequest {
  const { tools: _tools, tool_choice: _choice, parallel_tool_calls: _parallel, response_format: _format, ...rest } = chat;
  return { ...rest, stream: false, messages: [...chat.messages, { role: "user", content: COMPACTION_PROMPT }] };
}

/**
 * Pure: OpenAI's compacted response: every user message of the input, in order, then one compaction
 * item whose sealed summary stands in for the rest (only this deployment can read it back). An output
 * message has a `status` (the spec requires it): "completed" unless the client's item said otherwise.
 */
export function compactedResponse(inputItems: Json[], summary: string, sealer: Sealer, usage: Json): Json {
  const userMessages = inputItems.filter((item) => (item.type ?? "message") === "message" && item.role === "user").map((item) => ({ status: "completed", ...item }));
  return {
    id: randomId("resp_"),
    object: "response.compaction",
    created_at: Math.floor(Date.now() / 1000),
    output: [...userMessages, compactionItem(sealer, summary)],
    usage,
  };
}
