// Checks a /v1/chat/completions body before any upstream is touched (its shape, n, stream_options).
import { ProxyError } from "../../errors/proxy-error.ts";
import { parseBody } from "../../schemas/parse-body.ts";
import { ChatRequestSchema, type ChatRequest } from "../../schemas/chat-request.ts";

/** Validates a parsed body before any upstream is touched; the first problem becomes a 400. */
export function validateChatRequest(body: unknown): ChatRequest {
  const req = parseBody(ChatRequestSchema, body, { objectOnly: true, innermost: true });
  if (req.n != null && req.n !== 1) {
    throw new ProxyError({ status: 400, code: "unsupported_parameter", param: "n", message: "Only n=1 is supported; send one request per completion." });
  }
  if (req.stream_options && !req.stream) {
    throw new ProxyError({ status: 400, code: "invalid_value", param: "stream_options", message: "stream_options is only allowed when stream is true." });
  }
  return req;
}
