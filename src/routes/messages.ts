// The Anthropic Messages API (what Claude Code speaks): /v1/messages over the chat pipeline, and
// count_tokens, with every error in Anthropic's shape.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { anthropicErrorBody, anthropicErrorResponse } from "../api/messages/anthropic-error.ts";
import { convertMessagesRequest } from "../api/messages/convert-request.ts";
import { estimateTokens } from "../api/messages/estimate-tokens.ts";
import { MessageEncoder, type SignThinking } from "../api/messages/message-encoder.ts";
import { validateBody } from "../api/validate-body.ts";
import { loadConfig } from "../config/load-config.ts";
import { sealerFor } from "../api/responses/seal-key.ts";
import { toProxyError } from "../errors/error-envelope.ts";
import { ProxyError, type ErrorInfo } from "../errors/proxy-error.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { planTargets } from "../routing/plan-targets.ts";
import { runChat } from "../routing/pipeline.ts";
import { bodyTier, readRequestBody, reportedTier, requestScope } from "./request-scope.ts";
import { CountTokensRequestSchema, MessagesRequestSchema } from "../schemas/messages-request.ts";
import { framedSse, gathered, namedFrame } from "../responders/event-encoder.ts";
import { jsonResponse } from "../responders/json-response.ts";
import { randomId } from "../lib/ids.ts";
import { sseResponse } from "../responders/sse-response.ts";
import { adapterOf } from "../upstreams/registry/adapters.ts";

/**
 * `POST /v1/messages` (Anthropic Messages), stream and non-stream, over the chat pipeline. Every
 * error, including validation and configuration ones, is in Anthropic's shape. `x-api-key`,
 * `anthropic-version`, `anthropic-beta` and `?beta=true` are accepted and, like every client header,
 * never sent upstream.
 */
export async function messages(c: Context<AppEnv>): Promise<Response> {
  const requestId = c.get("requestId");
  try {
    const config = loadConfig(c.env);
    const request = validateBody(MessagesRequestSchema, await readRequestBody(c, config.limits.maxBodyBytes));
    // The signer first: once the run has started, its failure must reach a responder, not an await.
    const signer = await thinkingSigner(c.env);
    const scope = requestScope(c, bodyTier(request as { service_tier?: unknown }));
    const run = runChat(scope, config, convertMessagesRequest(request));
    const encoder = new MessageEncoder({ id: randomId("msg_"), model: request.model, requestId, serviceTier: reportedTier(scope) === "priority" ? "priority" : "standard" }, () => run.extension(), signer);
    const errorResponse = (err: ProxyError, headers: Record<string, string>) => anthropicErrorResponse(err, headers, requestId);
    const errorBody = (e: ErrorInfo) => anthropicErrorBody(e, requestId);
    if (request.stream) return await sseResponse({ ...run.common, encoder: framedSse(encoder, namedFrame), errorResponse });
    return await jsonResponse({ ...run.common, aggregator: gathered(encoder), result: () => (encoder.end(), encoder.message()), errorBody, errorResponse });
  } catch (e) {
    const err = toProxyError(e);
    return anthropicErrorResponse(err, { "x-request-id": requestId });
  }
}

/**
 * `POST /v1/messages/count_tokens`: `{input_tokens}` for the request as `/v1/messages` would send it,
 * counted by the model's first target when it can count (a llama-server). Another target, or a server
 * that cannot count now (unreachable, loading, failing), gives an estimate (`estimateTokens`) marked
 * by `x-switchyard-estimate: 1`; a request the server refuses is an Anthropic error.
 */
export async function countTokens(c: Context<AppEnv>): Promise<Response> {
  const requestId = c.get("requestId");
  try {
    const config = loadConfig(c.env);
    const request = validateBody(CountTokensRequestSchema, await readJsonBody(c.req.raw, config.limits.maxBodyBytes));
    c.get("meter")?.checkModel(request.model);
    const chat = convertMessagesRequest(request);
    const target = planTargets(config, request.model)[0]!;
    const count = adapterOf(target).countPromptTokens;
    if (count) {
      try {
        const ctx = { env: c.env, requestId, timeoutMs: config.timeouts.responseStartMs, signal: c.req.raw.signal };
        const n = await count(target, chat, ctx);
        return c.json({ input_tokens: n }, 200, { "x-switchyard-target": target.name });
      } catch (e) {
        if (!(e instanceof ProxyError) || !(e.retryable || e.status >= 500)) throw e;
      }
    }
    return c.json({ input_tokens: estimateTokens(chat) }, 200, { "x-switchyard-target": target.name, "x-switchyard-estimate": "1" });
  } catch (e) {
    return anthropicErrorResponse(toProxyError(e), { "x-request-id": requestId });
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
