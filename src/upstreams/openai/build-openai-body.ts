// The body sent to an OpenAI-compatible server for a chat request, and the prefill its answer continues.
import type { OpenAiTarget } from "../../config/config-schema.ts";
import type { ChatMessage, ChatRequest } from "../../schemas/chat-request.ts";
import { applyPromptMode } from "../../toolcalls/prompt/apply-prompt-mode.ts";

/**
 * Every field the client sent is kept (servers read their own extensions: vLLM's `top_k`,
 * `chat_template_kwargs`, …), then:
 * - it always streams, with `stream_options.include_usage` (usage comes only with it): non-stream
 *   answers are gathered by the proxy, so a departed client is noticed and a late failure reported;
 * - `model` is the target's, if it names one;
 * - history tool calls get the `type` OpenAI requires;
 * - `tools: "prompt"`: the tools go into the prompt and the reply is constrained by an OpenAI
 *   `response_format` json_schema (which vLLM, SGLang, Ollama and LM Studio all read), unless the
 *   client constrained it itself;
 * - a trailing assistant message gets the target's `prefill` mechanism (a field on the body or on
 *   that message);
 * - then the target's `strip` and `set`.
 */
export function buildOpenAiBody(req: ChatRequest, target: Pick<OpenAiTarget, "model" | "strip" | "set" | "tools" | "prefill">): Record<string, unknown> {
  const body: Record<string, unknown> = { ...req };
  body.model = target.model ?? req.model;
  body.stream = true;
  body.stream_options = { ...(req.stream_options ?? {}), include_usage: true };
  body.messages = req.messages.map((m) => (m.tool_calls?.some((tc) => tc.type == null) ? { ...m, tool_calls: m.tool_calls.map((tc) => ({ ...tc, type: tc.type ?? "function" })) } : m));

  if (target.tools === "prompt" && (req.tools || req.tool_choice)) {
    const clientFormat = body.response_format != null;
    applyPromptMode(body, req, "json_object");
    const format = body.response_format as { type?: unknown; schema?: unknown } | undefined;
    if (!clientFormat && format?.type === "json_object" && typeof format.schema === "string") {
      body.response_format = { type: "json_schema", json_schema: { name: "tool_call", schema: JSON.parse(format.schema) as unknown } };
    }
  }

  if (prefillOf(req, target) !== undefined) {
    if (target.prefill === "continue_final_message") {
      body.continue_final_message = true;
      body.add_generation_prompt = false;
    } else if (target.prefill === "prefix" || target.prefill === "partial") {
      const messages = body.messages as ChatMessage[];
      messages[messages.length - 1] = { ...messages.at(-1)!, [target.prefill]: true } as ChatMessage;
    }
  }

  for (const key of target.strip ?? []) delete body[key];
  for (const [key, value] of Object.entries(target.set ?? {})) body[key] = value;
  return body;
}

/** The text of the trailing assistant message the answer continues, when the target continues one. */
export function prefillOf(req: ChatRequest, target: Pick<OpenAiTarget, "prefill">): string | undefined {
  const last = req.messages.at(-1);
  if (!target.prefill || last?.role !== "assistant" || last.tool_calls?.length) return undefined;
  const content = last.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p.text === "string" ? p.text : "")).join("");
  return undefined;
}
