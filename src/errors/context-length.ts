// The one wording of "the prompt does not fit", whoever found it out (a llama-server, a browser
// session, or Switchyard's own estimate), and its reading back.

/**
 * OpenAI's wording for a prompt over the context, which clients' auto-compaction matches (with the
 * code `context_length_exceeded`); `contextTokens` is the most one request can hold (llama-server's per-slot `n_ctx`).
 */
export function contextLengthMessage(promptTokens: number, contextTokens: number): string {
  return `This model's maximum context length is ${contextTokens} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`;
}

/** The counts back from a `contextLengthMessage` (for APIs that word the same error their own way). */
export function parseContextLengthMessage(message: string): { promptTokens: number; contextTokens: number } | null {
  const m = /maximum context length is (\d+) tokens\. However, your messages resulted in (\d+) tokens/.exec(message);
  return m ? { contextTokens: Number(m[1]), promptTokens: Number(m[2]) } : null;
}
