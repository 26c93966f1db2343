// The schema for OpenAI Responses bodies (/v1/responses, /compact), checked before conversion.
import * as z from "zod/mini";
import { MAX_TOOLS, ToolName } from "./tool-limits.ts";
import { schemaDepthLimit, toolSchemaLimits, type SchemaAt } from "./tool-schema-limits.ts";

// OpenAI Responses request (`POST /v1/responses`), validated loosely: only what the conversion reads
// is type-checked; unknown fields are kept and forwarded to llama.cpp like chat's are.

/**
 * Any input item; its `type` (or `role` for a message without one) decides the rest. The fields whose
 * shape differs between item types (a message's `content`, a call's `output`, a hosted call's
 * `action`…) are checked by the conversion, so a hosted tool's history item never fails here.
 */
const InputItem = z.looseObject({
  type: z.optional(z.string()),
  role: z.optional(z.string()),
  id: z.optional(z.nullable(z.string())),
  call_id: z.optional(z.nullable(z.string())),
  name: z.optional(z.nullable(z.string())),
  /** The namespace of a function or custom tool call (a tool from a `namespace` entry). */
  namespace: z.optional(z.nullable(z.string())),
  /** A reasoning or compaction item's opaque token. */
  encrypted_content: z.optional(z.nullable(z.string())),
  content: z.optional(z.unknown()),
  arguments: z.optional(z.unknown()),
  /** A custom tool call's freeform input. */
  input: z.optional(z.unknown()),
  output: z.optional(z.unknown()),
  summary: z.optional(z.unknown()),
  /** A local_shell_call's `{type:"exec", command, …}`. */
  action: z.optional(z.unknown()),
});

/** A custom tool's input format: free text, or a Lark / regex grammar. */
const CustomFormat = z.looseObject({
  type: z.string(),
  syntax: z.optional(z.string()),
  definition: z.optional(z.string()),
});

/** A tool of a `namespace` entry (function or custom). */
const NestedTool = z.looseObject({
  type: z.string(),
  /** A function, custom or namespace tool's name (hosted tools have none). */
  name: z.optional(ToolName),
  description: z.optional(z.nullable(z.string())),
  parameters: z.optional(z.nullable(z.record(z.string(), z.unknown()))),
  strict: z.optional(z.nullable(z.boolean())),
  format: z.optional(z.nullable(CustomFormat)),
});

/** Any tool entry: function, custom, namespace (with its nested tools), local_shell, or a hosted tool. */
const ToolEntry = z.extend(NestedTool, { tools: z.optional(z.nullable(z.array(NestedTool).check(z.maxLength(MAX_TOOLS)))) });

/** Every function tool's `parameters`, a namespace's included (`[2, "tools", 0, "parameters"]`). */
function parametersOf(tools: Array<z.infer<typeof ToolEntry>>): SchemaAt[] {
  const out: SchemaAt[] = [];
  tools.forEach((tool, i) => {
    out.push({ path: [i, "parameters"], schema: tool.parameters });
    tool.tools?.forEach((nested, j) => out.push({ path: [i, "tools", j, "parameters"], schema: nested.parameters }));
  });
  return out;
}

/** How many tools, a namespace's counted one by one. */
const toolCount = (tools: Array<z.infer<typeof ToolEntry>>): number => tools.reduce((n, tool) => n + 1 + (tool.tools?.length ?? 0), 0);

/** The `tools` array, held to the limits on count, schema depth and size (tool-limits.ts). */
const ToolEntries = z.array(ToolEntry).check(z.maxLength(MAX_TOOLS), toolSchemaLimits(parametersOf, toolCount));

const ToolChoice = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({
    type: z.string(),
    name: z.optional(z.nullable(z.string())),
    /** `allowed_tools`: auto or required, over `tools`. */
    mode: z.optional(z.string()),
    tools: z.optional(z.array(z.looseObject({ type: z.string(), name: z.optional(z.nullable(z.string())) }))),
  }),
]);

const TextFormat = z.looseObject({
  type: z.string(),
  name: z.optional(z.string()),
  schema: z.optional(z.record(z.string(), z.unknown()).check(schemaDepthLimit())),
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
  tools: z.optional(z.nullable(ToolEntries)),
  tool_choice: z.optional(z.nullable(ToolChoice)),
  parallel_tool_calls: z.optional(z.nullable(z.boolean())),
  text: z.optional(z.nullable(z.looseObject({ format: z.optional(z.nullable(TextFormat)) }))),
  previous_response_id: z.optional(z.nullable(z.string())),
  store: z.optional(z.nullable(z.boolean())),
  background: z.optional(z.nullable(z.boolean())),
  conversation: z.optional(z.nullable(z.unknown())),
  metadata: z.optional(z.nullable(z.record(z.string(), z.string()))),
  user: z.optional(z.nullable(z.string())),
  reasoning: z.optional(z.nullable(z.looseObject({ effort: z.optional(z.nullable(z.string())), summary: z.optional(z.nullable(z.string())) }))),
  /**
   * Extra output to include: `message.output_text.logprobs` and `reasoning.encrypted_content` are
   * the ones Switchyard gives; others are accepted and ignored.
   */
  include: z.optional(z.nullable(z.array(z.string()))),
  top_logprobs: z.optional(z.nullable(z.int().check(z.minimum(0), z.maximum(20)))),
});

export type ResponsesRequest = z.infer<typeof ResponsesRequestSchema>;
export type ResponsesInputItem = z.infer<typeof InputItem>;
export type ResponsesTool = z.infer<typeof ToolEntry>;
export type ResponsesNestedTool = z.infer<typeof NestedTool>;
export type ResponsesToolChoice = z.infer<typeof ToolChoice>;
