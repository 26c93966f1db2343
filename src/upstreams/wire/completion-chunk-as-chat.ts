/**
 * One parsed chunk of llama-server's `/v1/completions` stream in the chat chunk shape, so the chat
 * parser's mapping (finish, usage, timings, in-stream errors) reads it unchanged:
 * `choices[].text` becomes `choices[].delta.content` (its `logprobs` kept); anything without a `choices` array (an error,
 * usage alone) passes as it is. Applied to the object the parser already has, so no frame is parsed
 * twice.
 */
export function completionChunkAsChat(chunk: object): object {
  const choices = (chunk as { choices?: unknown }).choices;
  if (!Array.isArray(choices)) return chunk;
  return {
    ...chunk,
    choices: choices.map((c: { index?: number; text?: unknown; finish_reason?: unknown; logprobs?: unknown }) => ({
      index: c.index ?? 0,
      delta: typeof c.text === "string" ? { content: c.text } : {},
      finish_reason: c.finish_reason ?? null,
      // With `logprobs: N`, llama-server gives the tokens' entries in the chat shape here too.
      ...(c.logprobs != null ? { logprobs: c.logprobs } : {}),
    })),
  };
}
