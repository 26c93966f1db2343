import type { ChatMessage, ChatRequest, Tool, ToolChoice } from "../../schemas/chat-request.ts";
import type { ResponsesInputItem, ResponsesRequest } from "../../schemas/responses-request.ts";
import { unsupported } from "../validate-body.ts";

type Json = Record<string, unknown>;
type Part = Json & { type: string };

/** Responses-only fields: converted below or meaningless to llama.cpp, so never forwarded. */
const RESPONSES_ONLY = [
  "input", "instructions", "max_output_tokens", "text", "previous_response_id", "store", "background",
  "conversation", "metadata", "include", "truncation", "reasoning", "prompt", "prompt_cache_key",
  "safety_identifier", "service_tier", "stream_options", "max_tool_calls", "top_logprobs", "user", "tools", "tool_choice",
];

/**
 * Pure: a Responses request → the chat request the pipeline runs. Unknown fields (llama.cpp's
 * `top_k`, `grammar`, …) are kept; what cannot be honoured without stored conversations or hosted
 * tools is refused with a 400 that says what to send instead.
 */
export function convertResponsesRequest(req: ResponsesRequest): ChatRequest {
  if (req.previous_response_id) {
    throw unsupported(
      "previous_response_id",
      "Switchyard stores no responses, so previous_response_id cannot be resolved. Send the whole conversation in `input` (the earlier output items, function_call and function_call_output included) and set store: false in your client.",
    );
  }
  if (req.conversation != null) throw unsupported("conversation", "Switchyard stores no conversations. Send the whole conversation in `input`.");
  if (req.background) throw unsupported("background", "Background responses need stored responses, which Switchyard does not keep. Use stream: true for long answers.");

  const rest: Json = { ...req };
  for (const key of RESPONSES_ONLY) delete rest[key];

  const messages: ChatMessage[] = [];
  if (req.instructions) messages.push({ role: "system", content: req.instructions });
  if (typeof req.input === "string") messages.push({ role: "user", content: req.input });
  else convertItems(req.input, messages);
  if (messages.length === 0) throw unsupported("input", "The input has no messages; send at least one.");

  const chat: ChatRequest = { ...rest, model: req.model, messages, stream: req.stream ?? false };
  if (req.max_output_tokens != null) chat.max_tokens = req.max_output_tokens;
  if (req.tools?.length) chat.tools = req.tools.map(convertTool);
  if (req.tool_choice != null) chat.tool_choice = convertToolChoice(req.tool_choice);
  // Token logprobs come only when asked for with `include` (as from OpenAI); top_logprobs says how
  // many alternatives each carries.
  if (req.include?.includes("message.output_text.logprobs")) {
    (chat as Json).logprobs = true;
    if (req.top_logprobs) (chat as Json).top_logprobs = req.top_logprobs;
  }
  const format = req.text?.format;
  if (format && format.type === "json_schema") {
    if (!format.schema) throw unsupported("text.format.schema", "text.format of type json_schema needs a `schema`.");
    chat.response_format = {
      type: "json_schema",
      json_schema: { name: format.name ?? "response", schema: format.schema, ...(format.strict != null ? { strict: format.strict } : {}) },
    };
  } else if (format && format.type === "json_object") {
    chat.response_format = { type: "json_object" };
  } else if (format && format.type !== "text") {
    throw unsupported("text.format.type", `text.format type "${format.type}" is not supported; use text, json_schema or json_object.`);
  }
  return chat;
}

function convertItems(items: ResponsesInputItem[], messages: ChatMessage[]): void {
  let reasoning = "";
  // Consecutive function_call items (and the assistant text before them) form one assistant message.
  let assistant: ChatMessage | null = null;
  const assistantMessage = (): ChatMessage => {
    if (assistant) return assistant;
    assistant = { role: "assistant", content: null };
    if (reasoning) assistant.reasoning_content = reasoning;
    reasoning = "";
    messages.push(assistant);
    return assistant;
  };

  items.forEach((item, i) => {
    const type = item.type ?? "message";
    const at = `input[${i}]`;
    switch (type) {
      case "message": {
        const role = item.role;
        if (role === "assistant") {
          assistant = null;
          const msg = assistantMessage();
          msg.content = textOf(item.content, `${at}.content`);
          return;
        }
        assistant = null;
        if (role !== "user" && role !== "system" && role !== "developer") {
          throw unsupported(`${at}.role`, `Message role "${String(role)}" is not supported; use user, assistant, system or developer.`);
        }
        // Chat templates know system, not developer.
        messages.push({ role: role === "developer" ? "system" : role, content: contentOf(item.content, `${at}.content`) });
        return;
      }
      case "function_call": {
        if (!item.call_id || !item.name || item.arguments === undefined) {
          throw unsupported(at, "A function_call item needs call_id, name and arguments.");
        }
        const msg = assistantMessage();
        msg.tool_calls = [...(msg.tool_calls ?? []), { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } }];
        return;
      }
      case "function_call_output": {
        if (!item.call_id || item.output === undefined) throw unsupported(at, "A function_call_output item needs call_id and output.");
        assistant = null;
        messages.push({ role: "tool", tool_call_id: item.call_id, content: textOf(item.output, `${at}.output`) });
        return;
      }
      case "reasoning": {
        const parts = [...arrayOf(item.content), ...arrayOf(item.summary)];
        reasoning += parts.map((p) => (typeof p.text === "string" ? p.text : "")).join("");
        return;
      }
      case "item_reference":
        throw unsupported(
          `${at}.type`,
          "Switchyard stores no responses, so item_reference cannot be resolved. Send the item itself (AI SDK: providerOptions.openai.store = false).",
        );
      default:
        throw unsupported(`${at}.type`, `Input items of type "${type}" are not supported; use message, function_call, function_call_output or reasoning.`);
    }
  });
}

function arrayOf(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((v): v is Json => typeof v === "object" && v !== null) : [];
}

/** Message content → a string when it is all text (what chat templates expect), else chat parts. */
function contentOf(content: ResponsesInputItem["content"], at: string): string | Part[] {
  if (content == null) return "";
  if (typeof content === "string") return content;
  const parts = content.map((p, i) => convertPart(p, `${at}[${i}]`));
  return parts.every((p) => p.type === "text") ? parts.map((p) => p.text).join("") : parts;
}

function textOf(content: ResponsesInputItem["content"], at: string): string {
  const c = contentOf(content, at);
  if (typeof c === "string") return c;
  throw unsupported(at, "Only text is supported here.");
}

function convertPart(part: Json, at: string): Part {
  switch (part.type) {
    case "input_text":
    case "output_text":
    case "text":
      return { type: "text", text: typeof part.text === "string" ? part.text : "" };
    case "refusal":
      return { type: "text", text: typeof part.refusal === "string" ? part.refusal : "" };
    case "input_image":
      if (typeof part.image_url !== "string") throw unsupported(`${at}.image_url`, "Images must be given as image_url (a URL or data: URL); file_id needs stored files.");
      return { type: "image_url", image_url: { url: part.image_url, ...(typeof part.detail === "string" ? { detail: part.detail } : {}) } };
    default:
      throw unsupported(`${at}.type`, `Content parts of type "${String(part.type)}" are not supported; use input_text or input_image.`);
  }
}

function convertTool(tool: NonNullable<ResponsesRequest["tools"]>[number], i: number): Tool {
  if (tool.type !== "function") {
    throw unsupported(`tools[${i}].type`, `Hosted tools ("${tool.type}") are not available; only function tools are supported.`);
  }
  if (!tool.name) throw unsupported(`tools[${i}].name`, "A function tool needs a name.");
  return {
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description != null ? { description: tool.description } : {}),
      ...(tool.parameters != null ? { parameters: tool.parameters } : {}),
      ...(tool.strict != null ? { strict: tool.strict } : {}),
    },
  };
}

function convertToolChoice(choice: NonNullable<ResponsesRequest["tool_choice"]>): ToolChoice {
  if (typeof choice === "string") return choice;
  if (choice.type === "function" && choice.name) return { type: "function", function: { name: choice.name } };
  throw unsupported("tool_choice", `tool_choice of type "${choice.type}" is not supported; use none, auto, required or {"type":"function","name":…}.`);
}
