// A chat request rewritten into what web-llm in a teammate's browser accepts: it throws on much
// that OpenAI clients send.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { ChatMessage, ChatRequest } from "../../schemas/chat-request.ts";
import { applyPromptMode } from "../../toolcalls/prompt/apply-prompt-mode.ts";

/**
 * Pure: an OpenAI chat request → a body web-llm 0.2.86 accepts (docs/relay-protocol.md, "request").
 * - system and `developer` messages become one system message at index 0 (web-llm throws
 *   SystemMessageOrderError for a system message anywhere else, UnsupportedRoleError for `developer`);
 * - `content: null` becomes "" (ContentTypeError), array content is flattened to its text
 *   (UserMessageContentErrorForNonVLM on text models);
 * - `max_completion_tokens` becomes `max_tokens` (web-llm ignores the former and would run to the
 *   end of the context);
 * - `response_format: json_schema` becomes `json_object` with the schema as a string (web-llm treats
 *   json_schema as unconstrained);
 * - `model` is the session's loaded model id (anything else is SpecifiedModelNotFoundError);
 * - it always streams with usage, like every upstream here. Every other field is kept.
 * A GGUF tab (`engine` "llama.cpp", wllama) takes the same body, which it reads as llama-server would;
 * only its tools differ: prompt mode under a GBNF grammar, as on a llama-server.
 */
export function adaptForWebLlm(req: ChatRequest, model: string, engine: "web-llm" | "llama.cpp" = "web-llm"): Record<string, unknown> {
  const body: Record<string, unknown> = { ...req };
  body.model = model;
  body.stream = true;
  body.stream_options = { include_usage: true };
  delete body.n;
  if (req.max_completion_tokens != null && req.max_tokens == null) body.max_tokens = req.max_completion_tokens;
  delete body.max_completion_tokens;

  const format = (req as Record<string, unknown>).response_format as { type?: unknown; json_schema?: { schema?: unknown } } | null | undefined;
  if (format && format.type === "json_schema") {
    const schema = format.json_schema?.schema;
    body.response_format = schema === undefined ? { type: "json_object" } : { type: "json_object", schema: JSON.stringify(schema) };
  }

  // A GGUF tab runs llama.cpp: prompt mode with the same GBNF grammar as a llama-server's.
  if (req.tools?.length || req.tool_choice) {
    if (engine === "llama.cpp") applyPromptMode(body, req, "grammar");
    else applyToolMode(body, req, model);
  }

  const system: string[] = [];
  const rest: Record<string, unknown>[] = [];
  for (const m of body.messages as ChatMessage[]) {
    const content = flattenContent(m);
    if (m.role === "system" || m.role === "developer") {
      if (content !== "") system.push(content);
      continue;
    }
    rest.push({ ...m, content });
  }
  body.messages = system.length ? [{ role: "system", content: system.join("\n\n") }, ...rest] : rest;
  return body;
}

/**
 * web-llm's own tool calling exists only for the Hermes models in `functionCallingModelIds`, and
 * there it refuses a custom system prompt (CustomSystemPromptError) and any response_format
 * (CustomResponseFormatError). So those models get native tools when the request has neither, and
 * everything else gets prompt mode: tools described in the system prompt, the reply constrained by
 * `json_object` with a schema built from them. Either way the reply arrives as text (web-llm streams
 * the Hermes JSON array as content too) and the tool-call rewriter turns it into scored calls.
 */
function applyToolMode(body: Record<string, unknown>, req: ChatRequest, model: string): void {
  const hasSystem = req.messages.some((m) => m.role === "system" || m.role === "developer");
  const hasFormat = (req as Record<string, unknown>).response_format != null;
  const choice = req.tool_choice;
  if (WEB_LLM_FUNCTION_CALLING_MODELS.has(model) && !hasSystem && !hasFormat && choice !== "none") {
    if (choice && typeof choice === "object" && req.tools) body.tools = req.tools.filter((t) => t.function.name === choice.function.name);
    delete body.tool_choice; // never read by web-llm
    delete body.parallel_tool_calls;
    return;
  }
  applyPromptMode(body, req, "json_object");
}

/** web-llm 0.2.86's `functionCallingModelIds`: the only models it accepts `tools` for. */
export const WEB_LLM_FUNCTION_CALLING_MODELS = new Set([
  "Hermes-2-Pro-Llama-3-8B-q4f16_1-MLC",
  "Hermes-2-Pro-Llama-3-8B-q4f32_1-MLC",
  "Hermes-2-Pro-Mistral-7B-q4f16_1-MLC",
  "Hermes-3-Llama-3.1-8B-q4f32_1-MLC",
  "Hermes-3-Llama-3.1-8B-q4f16_1-MLC",
]);

function flattenContent(m: ChatMessage): string {
  const c = m.content;
  if (c == null) return "";
  if (typeof c === "string") return c;
  const texts: string[] = [];
  for (const part of c) {
    const text: unknown = part.text;
    if (part.type === "text" && typeof text === "string") texts.push(text);
    else {
      throw new ProxyError({
        status: 400,
        code: "unsupported_content",
        param: "messages",
        retryable: true,
        message: `Browser sessions serve text models only; a "${part.type}" content part cannot be sent to one.`,
      });
    }
  }
  return texts.join("\n");
}
