// What the request tells the tool-call rewriter about the output it is about to read, beyond the
// tools: whether the output goes on from a prefilled assistant message (llama-server continues a
// trailing assistant message), whether the client asked for reasoning kept inline (llama.cpp's
// `reasoning_format: "none"`), and whether it asked for a JSON answer.

import type { ChatRequest } from "../schemas/chat-request.ts";
import type { RewriteOptions } from "../toolcalls/index.ts";

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
