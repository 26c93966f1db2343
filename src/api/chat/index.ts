// The door of /v1/chat/completions (OpenAI chat): its request checked before any upstream is touched
// (its shape, its llama-server fields, stream_options), run as it is (the pipeline's own request), its
// answer as chat.completion.chunk SSE frames or one chat.completion body.
import { ProxyError } from "../../errors/proxy-error.ts";
import { randomId } from "../../lib/ids.ts";
import { checkLlamaFields } from "../../schemas/llama-fields.ts";
import { parseBody } from "../../schemas/parse-body.ts";
import { ChatRequestSchema, type ChatRequest } from "../../schemas/chat-request.ts";
import type { GeneratingApi } from "../door.ts";
import { bodyTier } from "../service-tier.ts";
import { chatSseEncoder } from "./chat-sse-encoder.ts";
import { ChunkEncoder } from "./chunk-encoder.ts";
import { CompletionAggregator } from "./completion-aggregator.ts";

export { usageJson } from "./chunk-encoder.ts";

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

/** `POST /v1/chat/completions`, stream and non-stream; errors in OpenAI's envelope. */
export const chatApi: GeneratingApi<ChatRequest> = {
  validate: validateChatRequest,
  open: (request) => ({
    chat: request,
    tier: bodyTier(request),
    encode(run, served) {
      const meta = {
        id: randomId("chatcmpl-"),
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        includeUsage: request.stream_options?.include_usage === true,
        serviceTier: served,
      };
      if (request.stream) return { encoder: chatSseEncoder(new ChunkEncoder(meta, run.extension)) };
      const aggregator = new CompletionAggregator();
      return { aggregator, result: () => aggregator.result(meta, run.extension) };
    },
  }),
};
