// What the request tells the tool-call rewriter about the output it is about to read, beyond the
// tools: whether the output goes on from a prefilled assistant message (llama-server continues a
// trailing assistant message), whether the client asked for reasoning kept inline (llama.cpp's
// `reasoning_format: "none"`), and whether it asked for a JSON answer.

import type { ChatRequest } from "../../schemas/chat-request.ts";
import { ToolCallEvents, type RewriteOptions, type ToolDefinition } from "../../toolcalls/index.ts";

export function rewriteContext(request: ChatRequest): Pick<RewriteOptions, "continuation" | "reasoningFormat" | "jsonResponse"> {
  const extra = request as ChatRequest & { reasoning_format?: unknown; response_format?: { type?: unknown } | null };
  const last = request.messages[request.messages.length - 1];
  const format = extra.response_format?.type;
  return {
    ...(last?.role === "assistant" ? { continuation: true } : {}),
    ...(extra.reasoning_format === "none" ? { reasoningFormat: "none" as const } : {}),
    ...(format === "json_object" || format === "json_schema" ? { jsonResponse: true } : {}),
  };
}

/**
 * The tool-call rewriter stage for a request's answer: its tools' calls read (none with no tools or
 * `tool_choice: "none"`: then only reasoning is split off and framing dropped). `generationPrompt`
 * when the answer is raw text: where the rendered prompt left the output (an opened `<think>`…).
 */
export function toolCallEventsFor(request: ChatRequest, generationPrompt?: string): ToolCallEvents {
  return new ToolCallEvents((request.tools ?? []) as ToolDefinition[], {
    ...(request.tool_choice ? { tool_choice: request.tool_choice } : {}),
    ...(request.parallel_tool_calls != null ? { parallel_tool_calls: request.parallel_tool_calls } : {}),
    ...rewriteContext(request),
    ...(generationPrompt !== undefined ? { generationPrompt } : {}),
  });
}
