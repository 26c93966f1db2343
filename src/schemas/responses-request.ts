import * as z from "zod/mini";

// OpenAI Responses request (`POST /v1/responses`), validated loosely: only what the conversion reads
// is type-checked; unknown fields are kept and forwarded to llama.cpp like chat's are.

const ContentPart = z.looseObject({ type: z.string() });

/** Any input item; its `type` (or `role` for a message without one) decides the rest. */
const InputItem = z.looseObject({
  type: z.optional(z.string()),
  role: z.optional(z.string()),
  content: z.optional(z.nullable(z.union([z.string(), z.array(ContentPart)]))),
  call_id: z.optional(z.string()),
  name: z.optional(z.string()),
  arguments: z.optional(z.string()),
  output: z.optional(z.union([z.string(), z.array(ContentPart)])),
  id: z.optional(z.nullable(z.string())),
});

const FunctionTool = z.looseObject({
  type: z.string(),
  name: z.optional(z.string()),
  description: z.optional(z.nullable(z.string())),
  parameters: z.optional(z.nullable(z.record(z.string(), z.unknown()))),
  strict: z.optional(z.nullable(z.boolean())),
});

const ToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({ type: z.string(), name: z.optional(z.string()) }),
]);

const TextFormat = z.looseObject({
  type: z.string(),
  name: z.optional(z.string()),
  schema: z.optional(z.record(z.string(), z.unknown())),
  strict: z.optional(z.nullable(z.boolean())),
  description: z.optional(z.string()),
});

export const ResponsesRequestSchema = z.looseObject({
  model: z.string().check(z.minLength(1)),
  input: z.union([z.string(), z.array(InputItem)]),
  instructions: z.optional(z.nullable(z.string())),
  stream: z.optional(z.nullable(z.boolean())),
  max_output_tokens: z.optional(z.nullable(z.int().check(z.positive()))),
  temperature: z.optional(z.nullable(z.number())),
  top_p: z.optional(z.nullable(z.number())),
  tools: z.optional(z.nullable(z.array(FunctionTool))),
  tool_choice: z.optional(z.nullable(ToolChoice)),
  parallel_tool_calls: z.optional(z.nullable(z.boolean())),
  text: z.optional(z.nullable(z.looseObject({ format: z.optional(z.nullable(TextFormat)) }))),
  previous_response_id: z.optional(z.nullable(z.string())),
  store: z.optional(z.nullable(z.boolean())),
  background: z.optional(z.nullable(z.boolean())),
  conversation: z.optional(z.nullable(z.unknown())),
  metadata: z.optional(z.nullable(z.record(z.string(), z.string()))),
  user: z.optional(z.nullable(z.string())),
  /** Extra output to include; `message.output_text.logprobs` is the one Switchyard can give. */
  include: z.optional(z.nullable(z.array(z.string()))),
  top_logprobs: z.optional(z.nullable(z.int().check(z.minimum(0), z.maximum(20)))),
});

export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;
export type ResponsesInputItem = z.infer<typeof InputItem>;
