import type { ChatMessage, ChatRequest, Tool } from "../../schemas/chat-request.ts";
import type { MessagesBlock, MessagesRequest } from "../../schemas/messages-request.ts";
import { unsupported } from "../validate-body.ts";

type Json = Record<string, unknown>;
type Part = Json & { type: string };

/** Anthropic-only fields: converted below or meaningless to llama.cpp, so never forwarded. */
const MESSAGES_ONLY = ["system", "stop_sequences", "metadata", "thinking", "service_tier", "tools", "tool_choice", "container", "mcp_servers", "context_management"];

/**
 * Pure: an Anthropic Messages request → the chat request the pipeline runs. `tool_result` blocks
 * become tool messages placed before the rest of their user turn; `tool_use` blocks become the
 * assistant's tool_calls with their ids kept, so the agent loop round-trips.
 */
export function convertMessagesRequest(req: MessagesRequest): ChatRequest {
  const rest: Json = { ...req };
  for (const key of MESSAGES_ONLY) delete rest[key];

  const messages: ChatMessage[] = [];
  if (req.system !== undefined) {
    const system = typeof req.system === "string" ? req.system : req.system.map((b, i) => textBlock(b, `system[${i}]`)).join("\n");
    if (system) messages.push({ role: "system", content: system });
  }
  req.messages.forEach((m, i) => {
    const at = `messages[${i}].content`;
    if (typeof m.content === "string") {
      messages.push({ role: m.role, content: m.content });
      return;
    }
    if (m.role === "assistant") messages.push(assistantMessage(m.content, at));
    else messages.push(...userMessages(m.content, at));
  });

  const chat: ChatRequest = { ...rest, model: req.model, messages, max_tokens: req.max_tokens, stream: req.stream ?? false };
  if (req.stop_sequences?.length) chat.stop = req.stop_sequences;
  if (req.tools?.length) chat.tools = req.tools.map(convertTool);
  const choice = req.tool_choice;
  if (choice) {
    if (choice.type === "tool") {
      if (!choice.name) throw unsupported("tool_choice.name", 'tool_choice of type "tool" needs a name.');
      chat.tool_choice = { type: "function", function: { name: choice.name } };
    } else {
      chat.tool_choice = choice.type === "any" ? "required" : choice.type;
    }
    if (choice.disable_parallel_tool_use) chat.parallel_tool_calls = false;
  }
  return chat;
}

function userMessages(blocks: MessagesBlock[], at: string): ChatMessage[] {
  const tools: ChatMessage[] = [];
  const parts: Part[] = [];
  blocks.forEach((b, i) => {
    const where = `${at}[${i}]`;
    if (b.type === "tool_result") {
      if (typeof b.tool_use_id !== "string") throw unsupported(`${where}.tool_use_id`, "A tool_result block needs tool_use_id.");
      const content = b.content === undefined ? "" : typeof b.content === "string" ? b.content : textOf(b.content, `${where}.content`);
      tools.push({ role: "tool", tool_call_id: b.tool_use_id, content: b.is_error === true ? `Error: ${content}` : content });
    } else {
      parts.push(contentPart(b, where));
    }
  });
  const out = [...tools];
  if (parts.length) out.push({ role: "user", content: parts.every((p) => p.type === "text") ? parts.map((p) => p.text).join("") : parts });
  return out;
}

function assistantMessage(blocks: MessagesBlock[], at: string): ChatMessage {
  let text = "";
  let reasoning = "";
  const calls: NonNullable<ChatMessage["tool_calls"]> = [];
  blocks.forEach((b, i) => {
    const where = `${at}[${i}]`;
    switch (b.type) {
      case "text":
        text += typeof b.text === "string" ? b.text : "";
        return;
      case "thinking":
        reasoning += typeof b.thinking === "string" ? b.thinking : "";
        return;
      case "redacted_thinking":
        return; // encrypted by another provider: nothing a local model can read
      case "tool_use":
        if (typeof b.id !== "string" || typeof b.name !== "string") throw unsupported(where, "A tool_use block needs id and name.");
        calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
        return;
      default:
        throw unsupported(`${where}.type`, `Assistant content blocks of type "${b.type}" are not supported; use text, thinking or tool_use.`);
    }
  });
  const msg: ChatMessage = { role: "assistant", content: calls.length && text === "" ? null : text };
  if (reasoning) msg.reasoning_content = reasoning;
  if (calls.length) msg.tool_calls = calls;
  return msg;
}

function contentPart(b: MessagesBlock, at: string): Part {
  if (b.type === "text") return { type: "text", text: typeof b.text === "string" ? b.text : "" };
  if (b.type === "image") {
    const source = (b.source ?? {}) as Json;
    if (source.type === "base64" && typeof source.data === "string" && typeof source.media_type === "string") {
      return { type: "image_url", image_url: { url: `data:${source.media_type};base64,${source.data}` } };
    }
    if (source.type === "url" && typeof source.url === "string") return { type: "image_url", image_url: { url: source.url } };
    throw unsupported(`${at}.source`, "Images must have a base64 or url source.");
  }
  throw unsupported(`${at}.type`, `Content blocks of type "${b.type}" are not supported here; use text, image or tool_result.`);
}

function textBlock(b: MessagesBlock, at: string): string {
  if (b.type !== "text") throw unsupported(`${at}.type`, `Only text blocks are supported here, not "${b.type}".`);
  return typeof b.text === "string" ? b.text : "";
}

function textOf(blocks: unknown, at: string): string {
  if (!Array.isArray(blocks)) throw unsupported(at, "Expected a string or an array of text blocks.");
  return blocks.map((b, i) => textBlock(b as MessagesBlock, `${at}[${i}]`)).join("");
}

function convertTool(tool: NonNullable<MessagesRequest["tools"]>[number], i: number): Tool {
  if (tool.type != null && tool.type !== "custom") {
    throw unsupported(`tools[${i}].type`, `Server tools ("${tool.type}") are not available; only client tools with an input_schema are supported.`);
  }
  return {
    type: "function",
    function: { name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), parameters: tool.input_schema ?? { type: "object", properties: {} } },
  };
}
