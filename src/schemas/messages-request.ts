// The schema for Anthropic Messages bodies (/v1/messages, count_tokens), checked before conversion.
import * as z from "zod/mini";
import { MAX_TOOLS, ToolName } from "./tool-limits.ts";
import { toolSchemaLimits } from "./tool-schema-limits.ts";

// Anthropic Messages request (`POST /v1/messages`), validated loosely: what the conversion reads is
// type-checked, unknown fields are kept and forwarded to llama.cpp (`top_k`, `grammar`, …).

const Block = z.looseObject({ type: z.string() });

// `system` inside `messages`: Claude Code sends part of its system prompt (and, with the
// mid-conversation-tool-changes beta, tool_addition/tool_removal blocks) this way.
const Message = z.looseObject({
  role: z.enum(["user", "assistant", "system"]),
  content: z.union([z.string(), z.array(Block)]),
});

const Tool = z.looseObject({
  type: z.optional(z.nullable(z.string())),
  name: ToolName,
  description: z.optional(z.string()),
  input_schema: z.optional(z.record(z.string(), z.unknown())),
  defer_loading: z.optional(z.boolean()),
});

/** The `tools` array, held to the limits on count, schema depth and size (tool-limits.ts). */
const Tools = z.array(Tool).check(
  z.maxLength(MAX_TOOLS),
  toolSchemaLimits<z.infer<typeof Tool>>((tools) => tools.map((tool, i) => ({ path: [i, "input_schema"], schema: tool.input_schema }))),
);

const ToolChoice = z.looseObject({
  type: z.enum(["auto", "any", "tool", "none"]),
  name: z.optional(z.string()),
  disable_parallel_tool_use: z.optional(z.boolean()),
});

const shape = {
  model: z.string().check(z.minLength(1)),
  messages: z.array(Message).check(z.minLength(1)),
  system: z.optional(z.union([z.string(), z.array(Block)])),
  stop_sequences: z.optional(z.array(z.string())),
  stream: z.optional(z.boolean()),
  temperature: z.optional(z.number()),
  top_p: z.optional(z.number()),
  tools: z.optional(Tools),
  tool_choice: z.optional(ToolChoice),
};

export const MessagesRequestSchema = z.looseObject({ ...shape, max_tokens: z.int().check(z.positive()) });

/** `POST /v1/messages/count_tokens`: the same request without `max_tokens` (nothing is generated). */
export const CountTokensRequestSchema = z.looseObject({ ...shape, max_tokens: z.optional(z.int().check(z.positive())) });

export type MessagesRequest = z.infer<typeof MessagesRequestSchema>;
export type CountTokensRequest = z.infer<typeof CountTokensRequestSchema>;
export type MessagesBlock = z.infer<typeof Block>;
export type MessagesTool = z.infer<typeof Tool>;
