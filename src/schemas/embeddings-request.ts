// The schema for POST /v1/embeddings bodies, checked before the request is routed.
import * as z from "zod/mini";

// OpenAI embeddings request (`POST /v1/embeddings`), validated loosely and forwarded to llama.cpp.

/**
 * Inputs in one request at most (OpenAI's limit): each is one task on the server. Their size is the
 * body limit's. Checked after the schema (the union would only say the shape is wrong).
 */
export const MAX_EMBEDDING_INPUTS = 2048;

/** How many inputs a valid `input` holds: a string or one token array is one. */
export function embeddingInputCount(input: EmbeddingsRequest["input"]): number {
  return typeof input === "string" || typeof input[0] === "number" ? 1 : input.length;
}

export const EmbeddingsRequestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  input: z.union([z.string(), z.array(z.string()).check(z.minLength(1)), z.array(z.int()).check(z.minLength(1)), z.array(z.array(z.int())).check(z.minLength(1))]),
  encoding_format: z.optional(z.nullable(z.enum(["float", "base64"]))),
  dimensions: z.optional(z.nullable(z.int())),
});


export type EmbeddingsRequest = z.infer<typeof EmbeddingsRequestSchema>;
