// A prompt as a chain of hashed prefixes, one per message: how placement guesses what a server's
// prompt cache already holds.
import { fnv1a } from "./conversation-key.ts";

/** One prefix of a prompt at a message boundary: a hash of everything up to it and its size. */
export interface PromptPrefix {
  hash: string;
  /** Characters of JSON up to and including this part (a size measure, converted to tokens per server). */
  chars: number;
}

/**
 * The prefixes of a chat prompt at every message boundary, shortest first: the tools (when there are
 * any) and then each message, each hash chained on the one before. An agent's next turn repeats its
 * previous prompt and appends to it, so its chain begins with the previous turn's whole chain; the
 * longest prefix a server is known to have served is what its prompt cache can skip. Message
 * boundaries are coarser than llama-server's token-level match, and a client that re-serialises an
 * earlier message differently breaks the chain there: the estimate errs towards "not cached".
 */
export function promptPrefixes(messages: readonly unknown[], tools?: unknown): PromptPrefix[] {
  return prefixesOf(promptParts(messages, tools));
}

/** The prompt's parts as JSON, tools first: what `promptPrefixes` hashes, and whose lengths size the prompt. */
export function promptParts(messages: readonly unknown[], tools?: unknown): string[] {
  const parts: string[] = [];
  if (Array.isArray(tools) && tools.length) parts.push(JSON.stringify(tools));
  for (const m of messages) parts.push(JSON.stringify(m) ?? "null");
  return parts;
}

/** The hash chain over parts from `promptParts`. */
export function prefixesOf(parts: readonly string[]): PromptPrefix[] {
  const out: PromptPrefix[] = [];
  let hash = "";
  let chars = 0;
  for (const part of parts) {
    chars += part.length;
    hash = fnv1a(`${hash}\u0000${part}`);
    out.push({ hash, chars });
  }
  return out;
}
