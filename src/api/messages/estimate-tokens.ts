// The fallback for /v1/messages/count_tokens: a rough count when no llama-server can count.
import type { ChatRequest } from "../../schemas/chat-request.ts";

/**
 * Pure: a token count for when no llama-server can count — `ceil(characters / 4)` of the JSON of the
 * converted messages (system included) and tools, the usual rule of thumb for English text and code.
 */
export function estimateTokens(request: Pick<ChatRequest, "messages" | "tools">): number {
  const chars = JSON.stringify(request.messages).length + (request.tools?.length ? JSON.stringify(request.tools).length : 0);
  return Math.ceil(chars / 4);
}
