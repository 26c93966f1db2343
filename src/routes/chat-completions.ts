// POST /v1/chat/completions: an OpenAI chat request through the pipeline, answered as SSE or JSON.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { loadConfig } from "../config/load-config.ts";
import { runChat } from "../routing/pipeline.ts";
import { bodyTier, readRequestBody, reportedTier, requestScope } from "./request-scope.ts";
import { validateChatRequest } from "../api/chat/validate-chat-request.ts";
import { ChunkEncoder } from "../api/chat/chunk-encoder.ts";
import { CompletionAggregator } from "../api/chat/completion-aggregator.ts";
import { chatSseEncoder } from "../api/chat/chat-sse-encoder.ts";
import { sseResponse } from "../responders/sse-response.ts";
import { jsonResponse } from "../responders/json-response.ts";
import { randomId } from "../lib/ids.ts";

/** `POST /v1/chat/completions`, stream and non-stream. */
export async function chatCompletions(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const request = validateChatRequest(await readRequestBody(c, config.limits.maxBodyBytes));
  const scope = requestScope(c, bodyTier(request as { service_tier?: unknown }));
  const run = runChat(scope, config, request);
  const meta = {
    id: randomId("chatcmpl-"),
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    includeUsage: request.stream_options?.include_usage === true,
    serviceTier: reportedTier(scope),
  };
  if (request.stream) {
    return sseResponse({ ...run.common, encoder: chatSseEncoder(new ChunkEncoder(meta, run.extension)) });
  }
  const aggregator = new CompletionAggregator();
  return jsonResponse({ ...run.common, aggregator, result: () => aggregator.result(meta, run.extension) });
}
