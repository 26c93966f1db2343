// Prompt mode, part two: a JSON Schema for llama.cpp's `json_schema` that only admits one of the
// declared calls (or several, or the plain answer, as tool_choice allows), in the reply format of
// build-tool-prompt.ts.

import { parametersSchema } from "../scoring/normalize-schema.ts";
import { planToolChoice } from "./tool-choice-plan.ts";
import type { JsonSchema, ToolDefinition } from "../scoring/types.ts";
import type { ToolPromptOptions } from "./build-tool-prompt.ts";

const objectOf = (properties: JsonSchema, required: string[]): JsonSchema => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
});

export function buildToolCallSchema(tools: readonly ToolDefinition[], options: ToolPromptOptions = {}): JsonSchema | null {
  const plan = planToolChoice(tools, options.tool_choice, options.parallel_tool_calls);
  if (!plan) return null;
  const call: JsonSchema = {
    anyOf: plan.tools.map((t) =>
      objectOf({ name: { const: t.function.name }, arguments: parametersSchema(t.function.parameters) }, ["name", "arguments"]),
    ),
  };
  const shapes: JsonSchema[] = [objectOf({ tool_call: call }, ["tool_call"])];
  if (plan.mayCallSeveral) shapes.push(objectOf({ tool_calls: { type: "array", items: call, minItems: 1 } }, ["tool_calls"]));
  if (plan.mayAnswer) shapes.push(objectOf({ response: { type: "string" } }, ["response"]));
  return shapes.length === 1 ? shapes[0]! : { anyOf: shapes };
}
