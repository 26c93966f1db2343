/**
 * A key that stays the same for every turn of one conversation: a hash of its messages up to and
 * including the first user turn (system prompt, tools preamble, first question). Every later request
 * of the conversation repeats that prefix, so the upstream chosen for the key holds its prompt cache
 * (llama-server's `cache_prompt`). Null when there is no user message to anchor on.
 */
export function conversationKey(messages: readonly unknown[]): string | null {
  const end = messages.findIndex((m) => typeof m === "object" && m !== null && (m as { role?: unknown }).role === "user");
  if (end < 0) return null;
  return fnv1a(JSON.stringify(messages.slice(0, end + 1)));
}

/** 64-bit FNV-1a as 16 hex digits (two 32-bit halves; fast, no crypto needed for placement). */
export function fnv1a(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x01000193) ^ (h1 >>> 7);
  }
  return (h1 >>> 0).toString(16).padStart(8, "0") + (h2 >>> 0).toString(16).padStart(8, "0");
}
