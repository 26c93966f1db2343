// /v1/messages on the chat pipeline: an Anthropic Messages request turned into the chat request
// Switchyard runs (system, content blocks, tool use and results, tools, tool_choice).
import type { ChatMessage, ChatRequest, Tool } from "../../schemas/chat-request.ts";
import type { CountTokensRequest, MessagesBlock, MessagesRequest, MessagesTool } from "../../schemas/messages-request.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import { unsupported } from "../validate-body.ts";
import { ToolShelf } from "./tool-shelf.ts";

type Json = Record<string, unknown>;
type Part = Json & { type: string };

/** Anthropic-only fields: converted below or meaningless to llama.cpp, so never forwarded. */
const MESSAGES_ONLY = [
  "system", "stop_sequences", "metadata", "thinking", "service_tier", "tools", "tool_choice", "container", "mcp_servers", "context_management", "output_config",
];

/**
 * Pure: an Anthropic Messages request → the chat request the pipeline runs. `tool_result` blocks
 * become tool messages placed before the rest of their user turn; `tool_use` blocks become the
 * assistant's tool_calls with their ids kept, so the agent loop round-trips. A `system` message
 * inside `messages` stays a system message at its place. `cache_control` is ignored everywhere.
 */
export function convertMessagesRequest(req: MessagesRequest | CountTokensRequest): ChatRequest {
  const rest: Json = { ...req };
  for (const key of MESSAGES_ONLY) delete rest[key];

  req.tools?.forEach((t, i) => checkClientTool(t, `tools[${i}].type`));
  const shelf = new ToolShelf(req.tools);
  const messages: ChatMessage[] = [];
  if (req.system !== undefined) {
    const system = typeof req.system === "string" ? req.system : req.system.map((b, i) => textBlock(b, `system[${i}]`)).join("\n");
    if (system) messages.push({ role: "system", content: system });
  }
  req.messages.forEach((m, i) => {
    const at = `messages[${i}].content`;
    if (typeof m.content === "string") messages.push({ role: m.role, content: m.content });
    else if (m.role === "assistant") messages.push(assistantMessage(m.content, at));
    else if (m.role === "system") messages.push(...systemMessage(m.content, at, shelf));
    else messages.push(...userMessages(m.content, at, shelf));
  });

  const chat: ChatRequest = { ...rest, model: req.model, messages, stream: req.stream ?? false };
  if (req.max_tokens !== undefined) chat.max_tokens = req.max_tokens;
  if (req.stop_sequences?.length) chat.stop = req.stop_sequences;
  const tools = shelf.tools();
  if (tools.length) chat.tools = tools.map(convertTool);
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

/** A system message's text blocks, in place; its tool_addition/tool_removal blocks change the tools. */
function systemMessage(blocks: MessagesBlock[], at: string, shelf: ToolShelf): ChatMessage[] {
  const texts: string[] = [];
  blocks.forEach((b, i) => {
    const where = `${at}[${i}]`;
    if (b.type === "text") texts.push(blockText(b, where));
    else if (b.type === "tool_addition" || b.type === "tool_removal") toolChange(b, where, shelf);
    else throw unsupported(`${where}.type`, `System content blocks of type "${b.type}" are not supported; use text, tool_addition or tool_removal.`);
  });
  const text = texts.join("\n");
  return text ? [{ role: "system", content: text }] : [];
}

function toolChange(b: MessagesBlock, at: string, shelf: ToolShelf): void {
  const tool = (b.tool ?? {}) as Json;
  if (tool.type === "tool_reference" && typeof tool.name === "string") {
    if (b.type === "tool_removal") shelf.remove(tool.name);
    else shelf.load(tool.name);
    return;
  }
  const def = tool.definition as Json | undefined;
  if (b.type === "tool_addition" && tool.type === "tool_definition" && def && typeof def.name === "string" && def.name !== "") {
    checkClientTool(def as MessagesTool, `${at}.tool.definition.type`);
    shelf.add(def as MessagesTool);
    return;
  }
  throw unsupported(`${at}.tool`, `A ${b.type} block needs tool: {type: "tool_reference", name}${b.type === "tool_addition" ? ' or {type: "tool_definition", definition: {name, …}}' : ""}.`);
}

function userMessages(blocks: MessagesBlock[], at: string, shelf: ToolShelf): ChatMessage[] {
  const tools: ChatMessage[] = [];
  const parts: Part[] = [];
  // Chat tool messages carry text only: a tool result's images follow in the user message.
  const images: Part[] = [];
  blocks.forEach((b, i) => {
    const where = `${at}[${i}]`;
    if (b.type === "tool_result") {
      if (typeof b.tool_use_id !== "string") throw unsupported(`${where}.tool_use_id`, "A tool_result block needs tool_use_id.");
      const content = b.content === undefined ? "" : typeof b.content === "string" ? b.content : toolResultText(b.content, `${where}.content`, shelf, images);
      tools.push({ role: "tool", tool_call_id: b.tool_use_id, content: b.is_error === true ? `Error: ${content}` : content });
    } else {
      parts.push(...contentParts(b, where));
    }
  });
  const out = [...tools];
  parts.push(...images);
  if (parts.length) out.push({ role: "user", content: parts.every((p) => p.type === "text") ? joinText(parts) : parts });
  return out;
}

// Text blocks join as written; a document or search result is set apart by a blank line.
const standalone = new WeakSet<Part>();

function joinText(parts: Part[]): string {
  return parts.map((p, i) => (i > 0 && (standalone.has(p) || standalone.has(parts[i - 1]!)) ? "\n\n" : "") + (p.text as string)).join("");
}

function standaloneText(text: string): Part {
  const part = { type: "text", text };
  standalone.add(part);
  return part;
}

function assistantMessage(blocks: MessagesBlock[], at: string): ChatMessage {
  let text = "";
  let reasoning = "";
  const calls: NonNullable<ChatMessage["tool_calls"]> = [];
  blocks.forEach((b, i) => {
    const where = `${at}[${i}]`;
    switch (b.type) {
      case "text":
        text += blockText(b, where);
        return;
      case "thinking":
        // The model's own reasoning goes back whatever its signature: one that does not verify
        // (another deployment's, or none) is ignored, not refused.
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

/** A user content block as chat parts: text, an image, or a document / search result read as text. */
function contentParts(b: MessagesBlock, at: string): Part[] {
  switch (b.type) {
    case "text":
      return [{ type: "text", text: blockText(b, at) }];
    case "image":
      return [imagePart(b, at)];
    case "document":
      return documentParts(b, at);
    case "search_result":
      return [standaloneText(titled(b, searchResultText(b, at)))];
    default:
      throw unsupported(`${at}.type`, `Content blocks of type "${b.type}" are not supported here; use text, image, document (text), search_result or tool_result.`);
  }
}

function imagePart(b: MessagesBlock, at: string): Part {
  const source = (b.source ?? {}) as Json;
  if (source.type === "base64" && typeof source.data === "string" && typeof source.media_type === "string") {
    return { type: "image_url", image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (source.type === "url" && typeof source.url === "string") return { type: "image_url", image_url: { url: source.url } };
  throw unsupported(`${at}.source`, "Images must have a base64 or url source.");
}

/** A document with a text (or content) source is its text, after its title; a PDF cannot be read here. */
function documentParts(b: MessagesBlock, at: string): Part[] {
  const source = (b.source ?? {}) as Json;
  if (source.type === "text" && typeof source.data === "string") return [standaloneText(titled(b, source.data))];
  if (source.type === "content") {
    if (typeof source.content === "string") return [standaloneText(titled(b, source.content))];
    if (Array.isArray(source.content)) {
      const parts = (source.content as MessagesBlock[]).flatMap((c, i) => (c.type === "image" ? [imagePart(c, `${at}.source.content[${i}]`)] : []));
      const text = (source.content as MessagesBlock[]).filter((c) => c.type !== "image").map((c, i) => textBlock(c, `${at}.source.content[${i}]`)).join("");
      return [standaloneText(titled(b, text)), ...parts];
    }
  }
  throw unsupported(
    `${at}.source`,
    `Documents need a text or content source here (got ${typeof source.type === "string" ? `"${source.type}"` : "none"}): a local model cannot read ${typeof source.media_type === "string" ? source.media_type : "PDF"} files; send the extracted text instead.`,
  );
}

function searchResultText(b: MessagesBlock, at: string): string {
  const body = Array.isArray(b.content) ? (b.content as MessagesBlock[]).map((c, i) => textBlock(c, `${at}.content[${i}]`)).join("\n") : "";
  return typeof b.source === "string" && b.source ? `Source: ${b.source}\n${body}` : body;
}

function titled(b: MessagesBlock, text: string): string {
  const head = [typeof b.title === "string" ? b.title : "", typeof b.context === "string" ? b.context : ""].filter(Boolean).join("\n");
  return head ? `${head}\n\n${text}` : text;
}

/**
 * A tool result's content blocks as the tool message's text. `tool_reference` blocks (a tool
 * search's answer) load those deferred tools and say so; images are moved to `images`.
 */
function toolResultText(blocks: unknown, at: string, shelf: ToolShelf, images: Part[]): string {
  if (!Array.isArray(blocks)) throw unsupported(at, "Expected a string or an array of content blocks.");
  let text = "";
  const loaded: string[] = [];
  (blocks as MessagesBlock[]).forEach((b, i) => {
    const where = `${at}[${i}]`;
    if (b.type === "tool_reference" && typeof b.tool_name === "string") {
      shelf.load(b.tool_name);
      loaded.push(b.tool_name);
    } else if (b.type === "image") {
      images.push(imagePart(b, where));
    } else if (b.type === "document" || b.type === "search_result") {
      for (const p of contentParts(b, where)) p.type === "text" ? (text += (text ? "\n\n" : "") + (p.text as string)) : images.push(p);
    } else {
      text += textBlock(b, where);
    }
  });
  const note = loaded.length ? `Tools now available: ${loaded.join(", ")}.` : "";
  return text && note ? `${text}\n${note}` : text || note;
}

function textBlock(b: MessagesBlock, at: string): string {
  if (b.type !== "text") throw unsupported(`${at}.type`, `Only text blocks are supported here, not "${b.type}".`);
  return blockText(b, at);
}

/** A text block's text: a string, or absent (""); any other value is refused. */
function blockText(b: MessagesBlock, at: string): string {
  const value = b.text;
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  throw new ProxyError({ status: 400, code: "invalid_type", param: `${at}.text`, message: `Invalid request: ${at}.text must be a string, not ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}.` });
}

function checkClientTool(tool: MessagesTool, param: string): void {
  if (tool.type != null && tool.type !== "custom") {
    throw unsupported(param, `Server tools ("${tool.type}") are not available; only client tools with an input_schema are supported.`);
  }
}

function convertTool(tool: MessagesTool): Tool {
  return {
    type: "function",
    function: { name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), parameters: tool.input_schema ?? { type: "object", properties: {} } },
  };
}
