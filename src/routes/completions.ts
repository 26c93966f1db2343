// POST /v1/completions, OpenAI's legacy text completions: a raw prompt routed like a chat request,
// while each target's adapter sends the client's own completions body.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { TextCompletionEncoder } from "../api/completions/text-completion-encoder.ts";
import { runChat } from "../routing/pipeline.ts";
import { readRequestBody, requestScope } from "./request-scope.ts";
import { unsupported, validateBody } from "../api/validate-body.ts";
import { loadConfig } from "../config/load-config.ts";
import { CompletionsRequestSchema } from "../schemas/completions-request.ts";
import { dataFrame, framedSse, gathered } from "../responders/event-encoder.ts";
import { jsonResponse } from "../responders/json-response.ts";
import { randomId } from "../lib/ids.ts";
import { sseResponse } from "../responders/sse-response.ts";
import { adapterOf } from "../upstreams/registry/adapters.ts";
import { TargetUnableError } from "../upstreams/upstream.ts";

/** `POST /v1/completions` (OpenAI legacy text completions), stream and non-stream, on llama targets and browser sessions (engine.completions.create). */
export async function completions(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const request = validateBody(CompletionsRequestSchema, await readRequestBody(c, config.limits.maxBodyBytes));
  if (request.best_of != null && request.best_of !== 1) throw unsupported("best_of", "Only best_of=1 is supported.");
  const multi = Array.isArray(request.prompt) && request.prompt.length > 1 && request.prompt.every((p) => typeof p === "string" || Array.isArray(p));
  if (multi) throw unsupported("prompt", "Send one prompt per request (a string, or one token array).");
  if (request.stream_options && !request.stream) throw unsupported("stream_options", "stream_options is only allowed when stream is true.");

  const body = { ...request };
  // The upstreams carry their own (completions) body: the chat request names the model and the
  // output's bound, which the upstream body takes back as sent (a key with a day limit may set it).
  const asked = { model: request.model, messages: [], max_tokens: request.max_tokens, ...("n_predict" in request ? { n_predict: request.n_predict } : {}) };
  const run = runChat(requestScope(c), config, asked, {
    upstreamFor: (t, sent) => {
      const bounded = { ...body, ...(sent.max_tokens != null ? { max_tokens: sent.max_tokens } : {}), ...("n_predict" in sent ? { n_predict: sent.n_predict } : {}) };
      const complete = adapterOf(t).completions;
      if (!complete) throw new TargetUnableError({ status: 503, code: "no_capacity", message: `${t.name} cannot serve text completions.` });
      return complete(t, bounded);
    },
    prompt: () => request.prompt,
  });
  const meta = {
    id: randomId("cmpl-"),
    created: Math.floor(Date.now() / 1000),
    model: request.model,
    includeUsage: request.stream_options?.include_usage === true,
    logprobs: request.logprobs,
  };
  const encoder = new TextCompletionEncoder(meta, () => run.extension());
  if (request.stream) return sseResponse({ ...run.common, encoder: framedSse(encoder, dataFrame, "data: [DONE]\n\n") });
  return jsonResponse({
    ...run.common,
    aggregator: gathered(encoder),
    result: () => (encoder.end(), encoder.completion()),
  });
}
