// The schema for POST /v1/completions bodies, checked before the request is routed.
import * as z from "zod/mini";

// OpenAI legacy text completion request (`POST /v1/completions`), validated loosely: unknown fields
// (`grammar`, `top_k`, `n_probs`, …) are kept and forwarded to llama.cpp.

export const CompletionsRequestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  prompt: z.union([z.string(), z.array(z.string()), z.array(z.int()), z.array(z.array(z.int()))]),
  stream: z.optional(z.nullable(z.boolean())),
  stream_options: z.optional(z.nullable(z.looseObject({ include_usage: z.optional(z.nullable(z.boolean())) }))),
  max_tokens: z.optional(z.nullable(z.int().check(z.nonnegative()))),
  temperature: z.optional(z.nullable(z.number())),
  n: z.optional(z.nullable(z.int())),
  best_of: z.optional(z.nullable(z.int())),
  /** The legacy integer: the tokens' logprobs and this many alternatives at each position (0–5, as OpenAI). */
  logprobs: z.optional(z.nullable(z.int().check(z.minimum(0), z.maximum(5)))),
});


export type CompletionsRequest = z.infer<typeof CompletionsRequestSchema>;
