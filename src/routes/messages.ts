import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import { anthropicErrorBody, anthropicErrorResponse } from "../api/messages/anthropic-error.ts";
import { convertMessagesRequest } from "../api/messages/convert-request.ts";
import { MessageEncoder, type SignThinking } from "../api/messages/message-encoder.ts";
import { validateBody } from "../api/validate-body.ts";
import { loadConfig } from "../config/load-config.ts";
import { sealerFor } from "../crypto/seal-key.ts";
import { toProxyError } from "../errors/error-envelope.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { startChat } from "../routing/start-chat.ts";
import { MessagesRequestSchema } from "../schemas/messages-request.ts";
import { framedSse, gathered, namedFrame } from "../stream/event-encoder.ts";
import { jsonResponse } from "../stream/json-response.ts";
import { randomId } from "../stream/random-id.ts";
import { sseResponse } from "../stream/sse-response.ts";

/**
 * `POST /v1/messages` (Anthropic Messages), stream and non-stream, over the chat pipeline. Every
 * error, including validation and configuration ones, is in Anthropic's shape. `x-api-key`,
 * `anthropic-version`, `anthropic-beta` and `?beta=true` are accepted and, like every client header,
 * never sent upstream.
 */
export async function messages(c: Context<AppEnv>): Promise<Response> {
  try {
    const config = loadConfig(c.env);
    const request = validateBody(MessagesRequestSchema, await readJsonBody(c.req.raw, config.limits.maxBodyBytes));
    const signer = thinkingSigner(c.env);
    const run = startChat(c, config, convertMessagesRequest(request));
    const encoder = new MessageEncoder({ id: randomId("msg_"), model: request.model }, () => run.extension(), await signer);
    const errorResponse = anthropicErrorResponse;
    if (request.stream) return await sseResponse({ ...run.common, encoder: framedSse(encoder, namedFrame), errorResponse });
    return await jsonResponse({ ...run.common, aggregator: gathered(encoder), result: () => (encoder.end(), encoder.message()), errorBody: anthropicErrorBody, errorResponse });
  } catch (e) {
    const err = toProxyError(e);
    return anthropicErrorResponse(err, { "x-request-id": c.get("requestId") });
  }
}

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
