// Prompt mode, alternative to the JSON Schema: a llama.cpp GBNF grammar for the same reply format.
// It pins the envelope and the tool names; arguments are any JSON object (the schema variant
// constrains them too, and scoring reports what does not fit).

import { planToolChoice } from "./tool-choice-plan.ts";
import type { ToolDefinition } from "../scoring/types.ts";
import type { ToolPromptOptions } from "./build-tool-prompt.ts";

/** A GBNF string literal whose text is the JSON string literal of `name`. */
function nameLiteral(name: string): string {
  const json = JSON.stringify(name);
  return `"${json.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

export function buildToolCallGrammar(tools: readonly ToolDefinition[], options: ToolPromptOptions = {}): string | null {
  const plan = planToolChoice(tools, options.tool_choice, options.parallel_tool_calls);
  if (!plan) return null;
  const roots = ["call"];
  if (plan.mayCallSeveral) roots.push("calls");
  if (plan.mayAnswer) roots.push("answer");
  const rules = [
    `root ::= ${roots.join(" | ")}`,
    `call ::= "{" ws "\\"tool_call\\"" ws ":" ws callbody ws "}"`,
    `callbody ::= "{" ws "\\"name\\"" ws ":" ws name ws "," ws "\\"arguments\\"" ws ":" ws object ws "}"`,
    `name ::= ${plan.tools.map((t) => nameLiteral(t.function.name)).join(" | ")}`,
  ];
  if (plan.mayCallSeveral) rules.push(`calls ::= "{" ws "\\"tool_calls\\"" ws ":" ws "[" ws callbody (ws "," ws callbody)* ws "]" ws "}"`);
  if (plan.mayAnswer) rules.push(`answer ::= "{" ws "\\"response\\"" ws ":" ws string ws "}"`);
  rules.push(
    `value ::= object | array | string | number | "true" | "false" | "null"`,
    `object ::= "{" ws (string ws ":" ws value (ws "," ws string ws ":" ws value)*)? ws "}"`,
    `array ::= "[" ws (value (ws "," ws value)*)? ws "]"`,
    `string ::= "\\"" ([^"\\\\\\x7F\\x00-\\x1F] | "\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4}))* "\\""`,
    `number ::= "-"? ([0-9] | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?`,
    // As llama.cpp's own JSON grammar: a space or one line break with some indentation, so a small
    // model cannot fill its budget with whitespace.
    `ws ::= | " " | "\\n" [ \\t]{0,20}`,
  );
  return rules.join("\n") + "\n";
}
