// A Responses request's `input` items as the chat messages the pipeline runs: messages, tool calls
// and their outputs, reasoning and compactions (hosted tools' history left out).
import type { Sealer } from "./sealer.ts";
import type { ChatMessage } from "../../schemas/chat-request.ts";
import type { ResponsesInputItem } from "../../schemas/responses-request.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import { unsupported } from "../validate-body.ts";
import { openCompaction } from "./compaction-item.ts";
import { customToolArguments } from "./custom-tool.ts";
import { localShellArguments } from "./local-shell.ts";
import { openReasoning } from "./sealed-reasoning.ts";
import type { ToolNames, ToolOrigin } from "./tool-origin.ts";

type Json = Record<string, unknown>;
type Part = Json & { type: string };

export interface InputContext {
  names: ToolNames;
  /** Opens `encrypted_content` this deployment sealed (reasoning, compaction). */
  sealer?: Sealer | undefined;
}

/** History items of tools that ran on OpenAI's side: nothing a local model can use, so left out. */
const HOSTED_HISTORY = new Set(["tool_search_output", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response"]);
const isHostedHistory = (type: string) => /_call(_output)?$/.test(type) || HOSTED_HISTORY.has(type);

/**
 * Pure: Responses input items → chat messages. Calls (function, custom, local_shell) join one
 * assistant message with the text before them; their outputs become tool messages; reasoning becomes
 * the next assistant message's `reasoning_content`.
 */
export function convertInputItems(items: ResponsesInputItem[], ctx: InputContext): ChatMessage[] {
  const history = new ChatHistory(ctx.names);
  items.forEach((item, i) => convertItem(history, item, `input[${i}]`, ctx));
  history.flushImages();
  return history.messages;
}

/** The chat messages as they are built, with what joins or follows the next ones. */
class ChatHistory {
  readonly messages: ChatMessage[] = [];
  /** Reasoning seen since the last assistant message: the next one's `reasoning_content`. */
  reasoning = "";
  // Consecutive calls (and the assistant text before them) form one assistant message.
  private assistant: ChatMessage | null = null;
  // Images in tool outputs go to the model in a user message after the run of tool messages.
  private images: Part[] = [];

  constructor(private readonly names: ToolNames) {}

  /** The assistant message calls join: the open one, else a new one (with the reasoning before it). */
  assistantMessage(): ChatMessage {
    if (this.assistant) return this.assistant;
    const assistant: ChatMessage = { role: "assistant", content: null };
    if (this.reasoning) assistant.reasoning_content = this.reasoning;
    this.reasoning = "";
    this.messages.push(assistant);
    this.assistant = assistant;
    return assistant;
  }

  /** A message that is not an assistant's: the next call starts an assistant message of its own. */
  push(message: ChatMessage): void {
    this.assistant = null;
    this.messages.push(message);
  }

  /** An assistant message of its own (its text), which calls after it join. */
  assistantText(text: string): void {
    this.assistant = null;
    this.assistantMessage().content = text;
  }

  addCall(id: string, origin: ToolOrigin, args: string): void {
    const msg = this.assistantMessage();
    msg.tool_calls = [...(msg.tool_calls ?? []), { id, type: "function", function: { name: this.names.chatName(origin), arguments: args } }];
  }

  addOutput(callId: string, output: unknown, at: string): void {
    const { text, parts } = toolOutput(output, at);
    this.push({ role: "tool", tool_call_id: callId, content: parts.length ? `${text}${text ? "\n" : ""}[${parts.length === 1 ? "an image" : `${parts.length} images`}, in the next message]` : text });
    this.images.push(...parts);
  }

  flushImages(): void {
    if (!this.images.length) return;
    this.messages.push({ role: "user", content: [{ type: "text", text: "The tool output's images:" }, ...this.images] });
    this.images = [];
  }
}

/** One input item into the history (`at`: where it is in the request, for errors). */
function convertItem(history: ChatHistory, item: ResponsesInputItem, at: string, ctx: InputContext): void {
  const type = item.type ?? "message";
  if (!type.endsWith("_output")) history.flushImages();
  switch (type) {
    case "message":
      return convertMessage(history, item, at);
    case "function_call":
    case "custom_tool_call":
    case "local_shell_call": {
      const call = callOf(type, item, at);
      return history.addCall(call.id, call.origin, call.args);
    }
    case "function_call_output":
    case "custom_tool_call_output":
    case "local_shell_call_output": {
      // local_shell_call_output names its call with `id`.
      const callId = item.call_id ?? (type === "local_shell_call_output" ? item.id : undefined);
      if (!callId || item.output === undefined) throw unsupported(at, `A ${type} item needs call_id and output.`);
      return history.addOutput(callId, item.output, `${at}.output`);
    }
    case "reasoning": {
      const opened = item.encrypted_content ? openReasoning(ctx.sealer, item.encrypted_content) : null;
      // A token that does not open (another deployment's, OpenAI's) is dropped; its plain text still counts.
      history.reasoning += opened ?? [...arrayOf(item.content), ...arrayOf(item.summary)].map((p) => (typeof p.text === "string" ? p.text : "")).join("");
      return;
    }
    case "compaction":
    case "compaction_summary": {
      const summary = item.encrypted_content ? openCompaction(ctx.sealer, item.encrypted_content) : null;
      if (summary == null) return; // sealed elsewhere: unreadable, left out
      return history.push({ role: "user", content: summary });
    }
    case "item_reference":
      throw unsupported(
        `${at}.type`,
        "This item_reference was not resolved from stored responses. Send the item itself.",
      );
    default:
      if (isHostedHistory(type)) return;
      throw unsupported(
        `${at}.type`,
        `Input items of type "${type}" are not supported; use message, function_call, function_call_output, custom_tool_call, local_shell_call (and their outputs), reasoning or compaction.`,
      );
  }
}

/** A message item: an assistant's text, or a user's, system's or developer's message. */
function convertMessage(history: ChatHistory, item: ResponsesInputItem, at: string): void {
  const role = item.role;
  if (role === "assistant") return history.assistantText(textOf(item.content, `${at}.content`));
  if (role !== "user" && role !== "system" && role !== "developer") {
    throw unsupported(`${at}.role`, `Message role "${String(role)}" is not supported; use user, assistant, system or developer.`);
  }
  // Chat templates know system, not developer.
  history.push({ role: role === "developer" ? "system" : role, content: contentOf(item.content, `${at}.content`) });
}

/** A call item's id, the tool it calls and its arguments as the chat call's (JSON) string. */
function callOf(type: "function_call" | "custom_tool_call" | "local_shell_call", item: ResponsesInputItem, at: string): { id: string; origin: ToolOrigin; args: string } {
  switch (type) {
    case "function_call":
      if (!item.call_id || !item.name || typeof item.arguments !== "string") throw unsupported(at, "A function_call item needs call_id, name and arguments (a JSON string).");
      return { id: item.call_id, origin: { kind: "function", name: item.name, ...(item.namespace ? { namespace: item.namespace } : {}) }, args: item.arguments };
    case "custom_tool_call":
      if (!item.call_id || !item.name || typeof item.input !== "string") throw unsupported(at, "A custom_tool_call item needs call_id, name and input.");
      return { id: item.call_id, origin: { kind: "custom", name: item.name, ...(item.namespace ? { namespace: item.namespace } : {}) }, args: customToolArguments(item.input) };
    case "local_shell_call": {
      const id = item.call_id ?? item.id;
      if (!id) throw unsupported(at, "A local_shell_call item needs call_id.");
      return { id, origin: { kind: "local_shell" }, args: localShellArguments(objectOr(item.action)) };
    }
  }
}

function objectOr(value: unknown): Json | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : null;
}

function arrayOf(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((v): v is Json => typeof v === "object" && v !== null) : [];
}

/** Message content → a string when it is all text (what chat templates expect), else chat parts. */
function contentOf(content: unknown, at: string): string | Part[] {
  if (content == null) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw unsupported(at, "Expected a string or an array of content parts.");
  const parts = content.map((p, i) => convertPart(objectOr(p) ?? {}, `${at}[${i}]`));
  return parts.every((p) => p.type === "text") ? parts.map((p) => p.text).join("") : parts;
}

function textOf(content: unknown, at: string): string {
  const c = contentOf(content, at);
  if (typeof c === "string") return c;
  throw unsupported(at, "Only text is supported here.");
}

/** A tool output: its text, and its images (chat tool messages carry text only). */
function toolOutput(output: unknown, at: string): { text: string; parts: Part[] } {
  const c = contentOf(output, at);
  if (typeof c === "string") return { text: c, parts: [] };
  return { text: c.filter((p) => p.type === "text").map((p) => p.text).join(""), parts: c.filter((p) => p.type !== "text") };
}

function convertPart(part: Json, at: string): Part {
  switch (part.type) {
    case "input_text":
    case "output_text":
    case "text":
      return { type: "text", text: stringField(part, "text", at) };
    case "refusal":
      return { type: "text", text: stringField(part, "refusal", at) };
    case "input_image":
      if (typeof part.image_url !== "string") throw unsupported(`${at}.image_url`, "Images must be given as image_url (a URL or data: URL); file_id needs stored files.");
      return { type: "image_url", image_url: { url: part.image_url, ...(typeof part.detail === "string" ? { detail: part.detail } : {}) } };
    default:
      throw unsupported(`${at}.type`, `Content parts of type "${String(part.type)}" are not supported; use input_text or input_image.`);
  }
}

/** A part's text field: a string, or absent (""); any other value is refused. */
function stringField(part: Json, field: string, at: string): string {
  const value = part[field];
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  throw new ProxyError({ status: 400, code: "invalid_type", param: `${at}.${field}`, message: `Invalid request: ${at}.${field} must be a string, not ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}.` });
}
