// Checks a /v1/chat/completions body before any upstream is touched (its shape, its llama-server
// fields, stream_options).
import { ProxyError } from "../../errors/proxy-error.ts";
import { checkLlamaFields } from "../../schemas/llama-fields.ts";
import { parseBody } from "../../schemas/parse-body.ts";
import { ChatRequestSchema, type ChatRequest } from "../../schemas/chat-request.ts";

/** Validates a parsed body before any upstream is touched; the first problem becomes a 400. */
export function validateChatRequest(body: unknown): ChatRequest {
  const req = parseBody(ChatRequestSchema, body, { objectOnly: true, innermost: true });
  // n, n_cmpl, n_probs, id_slot, lora, …: what would make the upstream do more than was admitted.
  checkLlamaFields(req);
  if (req.stream_options && !req.stream) {
    throw new ProxyError({ status: 400, code: "invalid_value", param: "stream_options", message: "stream_options is only allowed when stream is true." });
  }
  return req;
}
