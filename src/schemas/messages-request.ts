import * as z from "zod/mini";

// Anthropic Messages request (`POST /v1/messages`), validated loosely: what the conversion reads is
// type-checked, unknown fields are kept and forwarded to llama.cpp (`top_k`, `grammar`, …).

const Block = z.looseObject({ type: z.string() });

const Message = z.looseObject({
  role: z.enum(["user", "assistant"]),
  content: z.union([z.string(), z.array(Block)]),
});

const Tool = z.looseObject({
  type: z.optional(z.nullable(z.string())),
  name: z.string().check(z.minLength(1)),
  description: z.optional(z.string()),
  input_schema: z.optional(z.record(z.string(), z.unknown())),
});

const ToolChoice = z.looseObject({
  type: z.enum(["auto", "any", "tool", "none"]),
  name: z.optional(z.string()),
  disable_parallel_tool_use: z.optional(z.boolean()),
});

export const MessagesRequestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  max_tokens: z.int().check(z.positive()),
  messages: z.array(Message).check(z.minLength(1)),
  system: z.optional(z.union([z.string(), z.array(Block)])),
  stop_sequences: z.optional(z.array(z.string())),
  stream: z.optional(z.boolean()),
  temperature: z.optional(z.number()),
  top_p: z.optional(z.number()),
  tools: z.optional(z.array(Tool)),
  tool_choice: z.optional(ToolChoice),
});

export type MessagesRequest = z.infer<typeof MessagesRequestSchema>;
export type MessagesBlock = z.infer<typeof Block>;
