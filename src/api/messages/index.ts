// The door of /v1/messages, Anthropic's Messages API (what Claude Code speaks): its request checked
// and converted to a chat request, its answer as Anthropic's events or one message, every error in
// Anthropic's shape; and what count_tokens and the other Messages routes use of it.
import { randomId } from "../../lib/ids.ts";
import { framedSse, gathered, namedFrame } from "../../responders/event-encoder.ts";
import { CountTokensRequestSchema, MessagesRequestSchema, type CountTokensRequest, type MessagesRequest } from "../../schemas/messages-request.ts";
import type { GeneratingApi } from "../door.ts";
import { bodyTier } from "../service-tier.ts";
import { sealerFor } from "../responses/index.ts";
import { validateBody } from "../validate-body.ts";
import { anthropicErrorBody, anthropicErrorResponse } from "./anthropic-error.ts";
import { convertMessagesRequest } from "./convert-request.ts";
import { MessageEncoder, type SignThinking } from "./message-encoder.ts";

export { anthropicErrorResponse } from "./anthropic-error.ts";
export { convertMessagesRequest } from "./convert-request.ts";
export { estimateTokens } from "./estimate-tokens.ts";

/** A count_tokens body checked (max_tokens optional). */
export const validateCountTokens = (body: unknown): CountTokensRequest => validateBody(CountTokensRequestSchema, body);

/**
 * `POST /v1/messages` (Anthropic Messages), stream and non-stream, over the chat pipeline. Every
 * error, including validation and configuration ones, is in Anthropic's shape. `x-api-key`,
 * `anthropic-version`, `anthropic-beta` and `?beta=true` are accepted and, like every client header,
 * never sent upstream.
 */
export const messagesApi: GeneratingApi<MessagesRequest> = {
  validate: (body) => validateBody(MessagesRequestSchema, body),
  async open(request, c) {
    const requestId = c.get("requestId");
    const tier = bodyTier(request);
    // The signer first: once the run has started, its failure must reach a responder, not an await.
    const signer = await thinkingSigner(c.env);
    return {
      chat: convertMessagesRequest(request),
      tier,
      encode(run, served) {
        // Anthropic's tiers: `priority`, or `standard` for every other.
        const serviceTier = served === "priority" ? "priority" : "standard";
        const encoder = new MessageEncoder({ id: randomId("msg_"), model: request.model, requestId, serviceTier }, () => run.extension(), signer);
        const errorResponse = (err: Parameters<typeof anthropicErrorResponse>[0], headers: Record<string, string>) => anthropicErrorResponse(err, headers, requestId);
        if (request.stream) return { encoder: framedSse(encoder, namedFrame), errorResponse };
        return { aggregator: gathered(encoder), result: () => (encoder.end(), encoder.message()), errorBody: (e) => anthropicErrorBody(e, requestId), errorResponse };
      },
    };
  },
  refuse: (err, c) => anthropicErrorResponse(err, { "x-request-id": c.get("requestId") }),
};

/** Thinking signatures with the deployment's sealer; without one (its store unreachable), empty ones. */
async function thinkingSigner(env: Env): Promise<SignThinking> {
  try {
    const sealer = await sealerFor(env);
    return (thinking) => sealer.sign("messages.thinking", thinking);
  } catch (e) {
    console.error("thinking signatures unavailable", e instanceof Error ? e.message : String(e));
    return () => "";
  }
}
