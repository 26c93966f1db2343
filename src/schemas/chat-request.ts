// The shape of a chat completions request: what is checked before it is routed, and the types the
// rest of the code reads it by.
import * as z from "zod/mini";
import { MAX_TOOLS, ToolName } from "./tool-limits.ts";
import { looseSchemaDepthLimit, toolSchemaLimits } from "./tool-schema-limits.ts";

// OpenAI chat-completion request, validated loosely: unknown fields (llama.cpp's `top_k`, `grammar`,
// `cache_prompt`, …) are kept and forwarded, so nothing a client sent is lost. Only what the proxy
// itself reads is checked for type.

// A part's `text` is forwarded as the prompt's text: anything but a string is refused here.
const ContentPart = z.looseObject({ type: z.string(), text: z.optional(z.string()) });

const ToolCall = z.looseObject({
  id: z.optional(z.string()),
  type: z.optional(z.string()),
  function: z.looseObject({
    name: z.string(),
    arguments: z.optional(z.union([z.string(), z.record(z.string(), z.unknown())])),
  }),
});

export const MessageSchema = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  content: z.optional(z.nullable(z.union([z.string(), z.array(ContentPart)]))),
  name: z.optional(z.string()),
  tool_calls: z.optional(z.nullable(z.array(ToolCall))),
  tool_call_id: z.optional(z.string()),
});

export const ToolSchema = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({
    name: ToolName,
    description: z.optional(z.string()),
    parameters: z.optional(z.record(z.string(), z.unknown())),
    strict: z.optional(z.nullable(z.boolean())),
  }),
});

/** A chat `tools` array, held to the limits on count, schema depth and size (tool-limits.ts). */
export const ToolsSchema = z.array(ToolSchema).check(
  z.maxLength(MAX_TOOLS),
  toolSchemaLimits<Tool>((tools) => tools.map((tool, i) => ({ path: [i, "function", "parameters"], schema: tool.function.parameters }))),
);

export const ToolChoiceSchema = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string() }) }),
]);

export const ChatRequestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  messages: z.array(MessageSchema).check(z.minLength(1)),
  stream: z.optional(z.nullable(z.boolean())),
  stream_options: z.optional(z.nullable(z.looseObject({ include_usage: z.optional(z.nullable(z.boolean())) }))),
  n: z.optional(z.nullable(z.int())),
  max_tokens: z.optional(z.nullable(z.int().check(z.positive()))),
  max_completion_tokens: z.optional(z.nullable(z.int().check(z.positive()))),
  temperature: z.optional(z.nullable(z.number())),
  tools: z.optional(z.nullable(ToolsSchema)),
  tool_choice: z.optional(z.nullable(ToolChoiceSchema)),
  parallel_tool_calls: z.optional(z.nullable(z.boolean())),
}).check(
  // Not otherwise checked (llama.cpp judges them), but their schemas are walked on the way there.
  looseSchemaDepthLimit([["response_format", "json_schema", "schema"], ["response_format", "schema"], ["json_schema"]]),
);

export type ChatRequest = z.infer<typeof ChatRequestSchema>;
export type ChatMessage = z.infer<typeof MessageSchema>;
export type Tool = z.infer<typeof ToolSchema>;
export type ToolChoice = z.infer<typeof ToolChoiceSchema>;
