import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import { MessageAggregator } from "../api/messages/aggregate-message.ts";
import { anthropicErrorBody, anthropicErrorResponse } from "../api/messages/anthropic-error.ts";
import { convertMessagesRequest } from "../api/messages/convert-request.ts";
import { MessageEncoder } from "../api/messages/message-encoder.ts";
import { frames } from "../api/responses/encode-response-stream.ts";
import { validateBody } from "../api/validate-body.ts";
import { loadConfig } from "../config/load-config.ts";
import { toProxyError } from "../errors/error-envelope.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { startChat } from "../routing/start-chat.ts";
import { MessagesRequestSchema } from "../schemas/messages-request.ts";
import { jsonResponse } from "../stream/json-response.ts";
import { randomId } from "../stream/random-id.ts";
import { sseResponse, type SseEncoder } from "../stream/sse-response.ts";

/**
 * `POST /v1/messages` (Anthropic Messages), stream and non-stream, over the chat pipeline. Every
 * error, including validation and configuration ones, is in Anthropic's shape. `x-api-key` and
 * `anthropic-version` are accepted and, like every client header, never sent upstream.
 */
export async function messages(c: Context<AppEnv>): Promise<Response> {
  try {
    const config = loadConfig(c.env);
    const request = validateBody(MessagesRequestSchema, await readJsonBody(c.req.raw, config.limits.maxBodyBytes));
    const run = startChat(c, config, convertMessagesRequest(request));
    const encoder = new MessageEncoder({ id: randomId("msg_"), model: request.model }, () => run.extension());
    const errorResponse = anthropicErrorResponse;
    if (request.stream) return await sseResponse({ ...run.common, encoder: messageSseEncoder(encoder), errorResponse });
    const aggregator = new MessageAggregator(encoder);
    return await jsonResponse({ ...run.common, aggregator, result: () => aggregator.result(), errorBody: anthropicErrorBody, errorResponse });
  } catch (e) {
    const err = toProxyError(e);
    return anthropicErrorResponse(err, { "x-request-id": c.get("requestId") });
  }
}

function messageSseEncoder(encoder: MessageEncoder): SseEncoder {
  return {
    encode: (event) => frames(encoder.encode(event)),
    end: () => frames(encoder.end()),
    get failed() {
      return encoder.failed !== null;
    },
  };
}
