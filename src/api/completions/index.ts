// The door of /v1/completions, OpenAI's legacy text completions: a raw prompt routed like a chat
// request, while each target's adapter sends the client's own completions body; the answer as
// text_completion SSE frames or one body.
import { randomId } from "../../lib/ids.ts";
import { CompletionsRequestSchema, type CompletionsRequest } from "../../schemas/completions-request.ts";
import { dataFrame, framedSse, gathered } from "../../responders/event-encoder.ts";
import { adapterOf } from "../../upstreams/registry/adapters.ts";
import { TargetUnableError } from "../../upstreams/upstream.ts";
import type { GeneratingApi } from "../door.ts";
import { unsupported, validateBody } from "../validate-body.ts";
import { TextCompletionEncoder } from "./text-completion-encoder.ts";

/** The body checked: its schema, then what Switchyard cannot honour (best_of, several prompts). */
function validateCompletions(body: unknown): CompletionsRequest {
  const request = validateBody(CompletionsRequestSchema, body);
  if (request.best_of != null && request.best_of !== 1) throw unsupported("best_of", "Only best_of=1 is supported.");
  const multi = Array.isArray(request.prompt) && request.prompt.length > 1 && request.prompt.every((p) => typeof p === "string" || Array.isArray(p));
  if (multi) throw unsupported("prompt", "Send one prompt per request (a string, or one token array).");
  if (request.stream_options && !request.stream) throw unsupported("stream_options", "stream_options is only allowed when stream is true.");
  return request;
}

/** `POST /v1/completions`, stream and non-stream, on llama targets and browser sessions (engine.completions.create). */
export const completionsApi: GeneratingApi<CompletionsRequest> = {
  validate: validateCompletions,
  open(request) {
    const body = { ...request };
    // The upstreams carry their own (completions) body: the chat request names the model and the
    // output's bound, which the upstream body takes back as sent (a key with a day limit may set it).
    const asked = { model: request.model, messages: [], max_tokens: request.max_tokens, ...("n_predict" in request ? { n_predict: request.n_predict } : {}) };
    return {
      chat: asked,
      options: {
        upstreamFor: (t, sent) => {
          const bounded = { ...body, ...(sent.max_tokens != null ? { max_tokens: sent.max_tokens } : {}), ...("n_predict" in sent ? { n_predict: sent.n_predict } : {}) };
          const complete = adapterOf(t).completions;
          if (!complete) throw new TargetUnableError({ status: 503, code: "no_capacity", message: `${t.name} cannot serve text completions.` });
          return complete(t, bounded);
        },
        prompt: () => request.prompt,
      },
      encode(run) {
        const meta = {
          id: randomId("cmpl-"),
          created: Math.floor(Date.now() / 1000),
          model: request.model,
          includeUsage: request.stream_options?.include_usage === true,
          logprobs: request.logprobs,
        };
        const encoder = new TextCompletionEncoder(meta, () => run.extension());
        if (request.stream) return { encoder: framedSse(encoder, dataFrame, "data: [DONE]\n\n") };
        return { aggregator: gathered(encoder), result: () => (encoder.end(), encoder.completion()) };
      },
    };
  },
};
