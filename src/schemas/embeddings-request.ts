// The schema for POST /v1/embeddings bodies, checked before the request is routed.
import * as z from "zod/mini";

// OpenAI embeddings request (`POST /v1/embeddings`), validated loosely and forwarded to llama.cpp.

export const EmbeddingsRequestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  input: z.union([z.string(), z.array(z.string()).check(z.minLength(1)), z.array(z.int()).check(z.minLength(1)), z.array(z.array(z.int())).check(z.minLength(1))]),
  encoding_format: z.optional(z.nullable(z.enum(["float", "base64"]))),
  dimensions: z.optional(z.nullable(z.int())),
});

