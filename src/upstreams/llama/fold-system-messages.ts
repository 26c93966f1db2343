// Late system messages folded into the first, for chat templates that refuse them anywhere else.
import type { ChatMessage } from "../../schemas/chat-request.ts";

// Agents put system text in the middle of a conversation (Claude Code sends its environment as a
// system message after the user's first turn). Most chat templates render that in place, but some
// allow a system message only first and raise a Jinja exception (Mistral Nemo: "Only user and
// assistant roles are supported, with the exception of an initial optional system message!").
// For those, the late system messages are folded into the leading one.

/** Whether a system message comes after the conversation has begun (after a non-system message). */
export function hasLateSystemMessage(messages: readonly ChatMessage[]): boolean {
  let begun = false;
  for (const m of messages) {
    if (m.role !== "system" && m.role !== "developer") begun = true;
    else if (begun) return true;
  }
  return false;
}

/**
 * Pure: the messages with every system (or developer) message moved into one leading system
 * message, their texts in order, separated by a blank line; everything else keeps its order.
 */
export function foldSystemMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  const texts: string[] = [];
  const rest: ChatMessage[] = [];
  for (const m of messages) {
    if (m.role === "system" || m.role === "developer") {
      const text = textOf(m.content);
      if (text) texts.push(text);
    } else rest.push(m);
  }
  return texts.length ? [{ role: "system", content: texts.join("\n\n") }, ...rest] : rest;
}

function textOf(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p.type === "text" && typeof p.text === "string" ? p.text : "")).join("");
}

/** llama-server's answer when a chat template raised on the messages it was given. */
export function isTemplateRefusal(message: string): boolean {
  return /Jinja Exception|raise_exception|Conversation roles must alternate/.test(message);
}
