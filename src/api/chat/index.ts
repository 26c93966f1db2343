// The door of /v1/chat/completions (OpenAI chat): its request checked, run as it is (the pipeline's
// own request), its answer as chat.completion.chunk SSE frames or one chat.completion body.
import { randomId } from "../../lib/ids.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { GeneratingApi } from "../door.ts";
import { chatSseEncoder } from "./chat-sse-encoder.ts";
import { ChunkEncoder } from "./chunk-encoder.ts";
import { CompletionAggregator } from "./completion-aggregator.ts";
import { validateChatRequest } from "./validate-chat-request.ts";

export { usageJson } from "./chunk-encoder.ts";

/** `POST /v1/chat/completions`, stream and non-stream; errors in OpenAI's envelope. */
export const chatApi: GeneratingApi<ChatRequest> = {
  validate: validateChatRequest,
  open: (request) => ({
    chat: request,
    encode(run) {
      const meta = {
        id: randomId("chatcmpl-"),
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        includeUsage: request.stream_options?.include_usage === true,
      };
      if (request.stream) return { encoder: chatSseEncoder(new ChunkEncoder(meta, run.extension)) };
      const aggregator = new CompletionAggregator();
      return { aggregator, result: () => aggregator.result(meta, run.extension) };
    },
  }),
};
