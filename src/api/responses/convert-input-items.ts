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
  const messages: ChatMessage[] = [];
  let reasoning = "";
  // Consecutive calls (and the assistant text before them) form one assistant message.
  let assistant: ChatMessage | null = null;
  // Images in tool outputs go to the model in a user message after the run of tool messages.
  let images: Part[] = [];
  const assistantMessage = (): ChatMessage => {
    if (assistant) return assistant;
    assistant = { role: "assistant", content: null };
    if (reasoning) assistant.reasoning_content = reasoning;
    reasoning = "";
    messages.push(assistant);
    return assistant;
  };
  const addCall = (id: string, origin: ToolOrigin, args: string) => {
    const msg = assistantMessage();
    msg.tool_calls = [...(msg.tool_calls ?? []), { id, type: "function", function: { name: ctx.names.chatName(origin), arguments: args } }];
  };
  const addOutput = (callId: string, output: unknown, at: string) => {
    assistant = null;
    const { text, parts } = toolOutput(output, at);
    messages.push({ role: "tool", tool_call_id: callId, content: parts.length ? `${text}${text ? "\n" : ""}[${parts.length === 1 ? "an image" : `${parts.length} images`}, in the next message]` : text });
    images.push(...parts);
  };
  const flushImages = () => {
    if (!images.length) return;
    messages.push({ role: "user", content: [{ type: "text", text: "The tool output's images:" }, ...images] });
    images = [];
  };

  items.forEach((item, i) => {
    const type = item.type ?? "message";
    const at = `input[${i}]`;
    if (!type.endsWith("_output")) flushImages();
    switch (type) {
      case "message": {
        const role = item.role;
        if (role === "assistant") {
          assistant = null;
          assistantMessage().content = textOf(item.content, `${at}.content`);
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
        if (!item.call_id || !item.name || typeof item.arguments !== "string") throw unsupported(at, "A function_call item needs call_id, name and arguments (a JSON string).");
        addCall(item.call_id, { kind: "function", name: item.name, ...(item.namespace ? { namespace: item.namespace } : {}) }, item.arguments);
        return;
      }
      case "custom_tool_call": {
        if (!item.call_id || !item.name || typeof item.input !== "string") throw unsupported(at, "A custom_tool_call item needs call_id, name and input.");
        addCall(item.call_id, { kind: "custom", name: item.name, ...(item.namespace ? { namespace: item.namespace } : {}) }, customToolArguments(item.input));
        return;
      }
      case "local_shell_call": {
        const id = item.call_id ?? item.id;
        if (!id) throw unsupported(at, "A local_shell_call item needs call_id.");
        addCall(id, { kind: "local_shell" }, localShellArguments(objectOr(item.action)));
        return;
      }
      case "function_call_output":
      case "custom_tool_call_output":
      case "local_shell_call_output": {
        // local_shell_call_output names its call with `id`.
        const callId = item.call_id ?? (type === "local_shell_call_output" ? item.id : undefined);
        if (!callId || item.output === undefined) throw unsupported(at, `A ${type} item needs call_id and output.`);
        addOutput(callId, item.output, `${at}.output`);
        return;
      }
      case "reasoning": {
        const opened = item.encrypted_content ? openReasoning(ctx.sealer, item.encrypted_content) : null;
        // A token that does not open (another deployment's, OpenAI's) is dropped; its plain text still counts.
        reasoning += opened ?? [...arrayOf(item.content), ...arrayOf(item.summary)].map((p) => (typeof p.text === "string" ? p.text : "")).join("");
        return;
      }
      case "compaction":
      case "compaction_summary": {
        const summary = item.encrypted_content ? openCompaction(ctx.sealer, item.encrypted_content) : null;
        if (summary == null) return; // sealed elsewhere: unreadable, left out
        assistant = null;
        messages.push({ role: "user", content: summary });
        return;
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
  });
  flushImages();
  return messages;
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
