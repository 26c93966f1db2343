// Prompt mode, part one: a system-prompt section that describes the tools and the one reply
// format the rewriter reads best (llama.cpp's generic handler uses the same shapes).

import { parametersSchema } from "../scoring/normalize-schema.ts";
import { planToolChoice } from "./tool-choice-plan.ts";
import type { ToolChoice, ToolDefinition } from "../scoring/types.ts";

export interface ToolPromptOptions {
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
}

/** The section to append to the system prompt, or null when no tool may be called. */
export function buildToolPrompt(tools: readonly ToolDefinition[], options: ToolPromptOptions = {}): string | null {
  const plan = planToolChoice(tools, options.tool_choice, options.parallel_tool_calls);
  if (!plan) return null;
  const lines = ["# Tools", "", "You can call these tools. Each takes arguments that match its JSON Schema.", ""];
  for (const t of plan.tools) {
    lines.push(`## ${t.function.name}`);
    if (t.function.description) lines.push(t.function.description);
    lines.push(`Parameters: ${JSON.stringify(parametersSchema(t.function.parameters))}`, "");
  }
  lines.push("# Reply format", "", "Reply with exactly one JSON object and nothing else:");
  lines.push('- to call a tool: {"tool_call": {"name": "<tool name>", "arguments": {<arguments>}}}');
  if (plan.mayCallSeveral) {
    lines.push('- to call several tools at once: {"tool_calls": [{"name": "<tool name>", "arguments": {<arguments>}}, …]}');
  }
  if (plan.mayAnswer) {
    lines.push('- to answer without a tool: {"response": "<your answer>"}', "");
    lines.push("Call a tool only when you need its result to answer; otherwise answer directly.");
  } else if (plan.tools.length === 1 && typeof options.tool_choice === "object") {
    lines.push("", `You must call ${plan.tools[0]!.function.name}.`);
  } else {
    lines.push("", "You must call a tool.");
  }
  lines.push("Write only arguments the tool declares, with the declared types.");
  return lines.join("\n");
}
