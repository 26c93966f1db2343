// Prompt mode applied to an upstream request: the tools described in the system prompt and the reply
// constrained by a grammar or a schema, for a server whose chat template cannot call tools.

import type { ChatMessage, ChatRequest } from "../../schemas/chat-request.ts";
import { buildToolCallGrammar } from "./build-tool-grammar.ts";
import { buildToolPrompt } from "./build-tool-prompt.ts";
import { buildToolCallSchema } from "./build-tool-schema.ts";
import type { ToolDefinition } from "../scoring/types.ts";

/**
 * How the reply is constrained: a GBNF `grammar` (llama.cpp), or web-llm's
 * `response_format: {type: "json_object", schema: "<JSON Schema as a string>"}`.
 */
export type PromptModeConstraint = "grammar" | "json_object";

/**
 * Prompt mode, for servers whose chat template cannot call tools (llama-server then drops `tools`
 * silently): the tools leave the body, are described in the system prompt with a no-action "answer"
 * choice, and the output is constrained by a grammar built from them — unless the client sent its own
 * `grammar`, `json_schema` or `response_format`, which wins. The rewriter then reads the reply. Past
 * tool calls and results in the history become text the template can render. Pure.
 */
export function applyPromptMode(body: Record<string, unknown>, request: ChatRequest, constraint: PromptModeConstraint = "grammar"): void {
  const tools = (request.tools ?? []) as ToolDefinition[];
  delete body.tools;
  delete body.tool_choice;
  delete body.parallel_tool_calls;
  const messages = (body.messages as ChatMessage[]).map(historyAsText);
  body.messages = messages;
  if (!tools.length) return;

  const options = {
    ...(request.tool_choice ? { tool_choice: request.tool_choice } : {}),
    ...(request.parallel_tool_calls != null ? { parallel_tool_calls: request.parallel_tool_calls } : {}),
  };
  const prompt = buildToolPrompt(tools, options);
  if (!prompt) return; // tool_choice "none": the model just answers.
  const first = messages[0];
  if (first && (first.role === "system" || first.role === "developer") && typeof first.content === "string") {
    messages[0] = { ...first, content: `${first.content}\n\n${prompt}` };
  } else {
    messages.unshift({ role: "system", content: prompt });
  }
  const clientConstraint = body.grammar != null || body.json_schema != null || body.response_format != null;
  if (clientConstraint) return;
  if (constraint === "grammar") {
    const grammar = buildToolCallGrammar(tools, options);
    if (grammar) body.grammar = grammar;
  } else {
    const schema = buildToolCallSchema(tools, options);
    if (schema) body.response_format = { type: "json_object", schema: JSON.stringify(schema) };
  }
}

function historyAsText(m: ChatMessage): ChatMessage {
  if (m.role === "assistant" && m.tool_calls?.length) {
    const calls = m.tool_calls.map((tc) => ({ name: tc.function.name, arguments: parseArguments(tc.function.arguments) }));
    const json = JSON.stringify(calls.length === 1 ? { tool_call: calls[0] } : { tool_calls: calls });
    const text = typeof m.content === "string" && m.content ? `${m.content}\n${json}` : json;
    const { tool_calls: _drop, ...rest } = m;
    return { ...rest, content: text };
  }
  if (m.role === "tool") {
    const content = typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "");
    const { tool_call_id: _id, ...rest } = m;
    return { ...rest, role: "user", content: `Tool result${m.name ? ` from ${m.name}` : ""}: ${content}` };
  }
  return m;
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== "string") return args ?? {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}
