// What Switchyard does with each llama-server request field that multiplies or redirects work: pass
// it, bound it, or refuse it with a 400 naming the field. One table, checked on every API's body.
//
// Bodies are forwarded with their unknown fields (llama.cpp's samplers, grammar, …), so a field
// llama-server reads reaches it from every door: chat, completions, Responses and Messages (whose
// conversions keep the fields they do not know) and embeddings. Switchyard admits, queues and
// charges one request as one generation of at most its bound on one slot; a field that makes the
// server do more than that (more choices, more slots, its own slot, an adapter swap, a sampler run
// again and again) is refused or bounded here, so what runs is what was admitted and charged.
// The fields and their meanings: llama-server's README, tools/server/server-schema.cpp (3.21.1).
import { ProxyError } from "../errors/proxy-error.ts";

export type FieldRule =
  /** Forwarded as sent; `why` says why it is harmless. */
  | { pass: string }
  /** A number at most `max` (or an array or string of at most `max` entries): else 400 invalid_value. */
  | { max: number; why: string }
  /** Only these values (null is always the server's default): else 400 unsupported_parameter. */
  | { only: readonly unknown[]; why: string };

/** Bound of `n_probs`, `top_logprobs` and a numeric `logprobs`: OpenAI's `top_logprobs` limit. */
export const MAX_PROBS = 20;
/** Bound of the penalty windows: the server allocates a buffer of this many tokens per request. */
export const MAX_PENALTY_WINDOW = 131_072;
/** Bound of `samplers`: each entry is a pass over the candidates on every token, and one may repeat. */
export const MAX_SAMPLERS = 16;

/** The per-field decision. A field not listed is forwarded as sent (llama-server judges it). */
export const LLAMA_FIELDS: Readonly<Record<string, FieldRule>> = {
  // Work multipliers.
  n: { only: [1], why: "Only n=1 is supported; send one request per completion." },
  n_cmpl: { only: [1], why: "Only n_cmpl=1 is supported (it is llama-server's n); send one request per completion." },
  n_probs: { max: MAX_PROBS, why: `n_probs is at most ${MAX_PROBS} (OpenAI's top_logprobs limit).` },
  top_logprobs: { max: MAX_PROBS, why: `top_logprobs is at most ${MAX_PROBS}.` },
  // llama-server reads a numeric `logprobs` as n_probs (a boolean is chat's flag, and passes).
  logprobs: { max: MAX_PROBS, why: `A numeric logprobs is at most ${MAX_PROBS}.` },
  samplers: { max: MAX_SAMPLERS, why: `samplers lists at most ${MAX_SAMPLERS} entries.` },
  repeat_last_n: { max: MAX_PENALTY_WINDOW, why: `repeat_last_n is at most ${MAX_PENALTY_WINDOW} tokens.` },
  dry_penalty_last_n: { max: MAX_PENALTY_WINDOW, why: `dry_penalty_last_n is at most ${MAX_PENALTY_WINDOW} tokens.` },
  // Placement and the server's own settings: Switchyard's, not a client's.
  id_slot: { only: [-1], why: "Switchyard places requests on slots; id_slot cannot be chosen (leave it out)." },
  lora: { only: [[]], why: "LoRA adapters are the server's setting: a per-request adapter change clears the slot's prompt cache. Leave lora out." },
  n_discard: { only: [0], why: "n_discard is the server's context-shift setting; leave it out." },
  verbose: { only: [false], why: "verbose is the server's debugging output (it carries the prompt and the cache state); leave it out." },
  backend_sampling: { only: [false], why: "backend_sampling is the server's setting; leave it out." },
  // Reviewed and forwarded.
  n_predict: { pass: "the output's bound: the key's meter bounds it with max_tokens (Meter.bound)" },
  t_max_predict_ms: { pass: "only ends a generation earlier" },
  n_indent: { pass: "only ends a generation earlier" },
  n_keep: { pass: "which prompt tokens a context shift keeps: no more work" },
  cache_prompt: { pass: "false only reprocesses the sender's own prompt, charged as prompt tokens either way" },
  n_cache_reuse: { pass: "reuses cached chunks of the slot's prompt: less work, not more" },
  return_tokens: { pass: "token ids of what was generated: output linear in the tokens charged" },
  post_sampling_probs: { pass: "changes which probabilities n_probs (bounded) reports" },
  response_fields: { pass: "read only by llama-server's native /completion, which Switchyard never calls" },
  timings_per_token: { pass: "a few numbers on each chunk" },
  return_progress: { pass: "prompt progress chunks: a few per prompt" },
};

/**
 * Checks a request body's llama-server fields against LLAMA_FIELDS; the first field out of its rule
 * is a 400 naming it. Absent and null fields (the server's default) always pass.
 */
export function checkLlamaFields(body: Readonly<Record<string, unknown>>): void {
  for (const field in body) {
    const rule = Object.hasOwn(LLAMA_FIELDS, field) ? LLAMA_FIELDS[field]! : undefined;
    const value = body[field];
    if (!rule || value === null || value === undefined || "pass" in rule) continue;
    if ("max" in rule) {
      const size = typeof value === "number" ? value : Array.isArray(value) || typeof value === "string" ? value.length : undefined;
      if (size !== undefined && !(size <= rule.max)) throw new ProxyError({ status: 400, code: "invalid_value", param: field, message: rule.why });
      continue;
    }
    if (!rule.only.some((allowed) => sameValue(allowed, value))) throw new ProxyError({ status: 400, code: "unsupported_parameter", param: field, message: rule.why });
  }
}

/** The allowed values are numbers, booleans and the empty array. */
function sameValue(allowed: unknown, value: unknown): boolean {
  if (Array.isArray(allowed)) return Array.isArray(value) && value.length === 0 && allowed.length === 0;
  return allowed === value;
}
