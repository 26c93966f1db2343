// Token logprobs for /v1/completions in OpenAI's legacy shape, built from the chat-shaped entries
// that llama-server and web-llm give for text completions too.
import type { TokenLogprob } from "../../events/events.ts";

/** A text completion's `logprobs` in OpenAI's legacy shape: one position per generated token. */
export interface LegacyLogprobs {
  tokens: string[];
  token_logprobs: number[];
  /** The most likely tokens at each position, token → logprob (the sampled one among them when it ranks). */
  top_logprobs: Array<Record<string, number>>;
  /** Each token's character offset in the completion's text (code points, counted from its start, as vLLM does). */
  text_offset: number[];
}

export const emptyLegacyLogprobs = (): LegacyLogprobs => ({ tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] });

/**
 * Pure: token entries in the chat shape llama-server and web-llm give for text completions too
 * (`{token, logprob, top_logprobs: [{token, logprob}]}`) appended to `into` in the legacy shape, the
 * first at character `offset`, with at most `top` alternatives per position (the request's N: an
 * upstream may give more). Returns the offset after the last token. Entries without a token or a
 * numeric logprob are skipped.
 */
export function appendLegacyLogprobs(into: LegacyLogprobs, entries: readonly TokenLogprob[], offset: number, top: number): number {
  for (const entry of entries) {
    const { token, logprob, top_logprobs: ranked } = entry as { token?: unknown; logprob?: unknown; top_logprobs?: unknown };
    if (typeof token !== "string" || typeof logprob !== "number") continue;
    // A Map, then own properties: a token may be any string, "__proto__" included.
    const alternatives = new Map<string, number>();
    if (Array.isArray(ranked)) {
      for (const t of ranked as Array<{ token?: unknown; logprob?: unknown }>) {
        if (alternatives.size >= top) break;
        if (typeof t?.token === "string" && typeof t.logprob === "number" && !alternatives.has(t.token)) alternatives.set(t.token, t.logprob);
      }
    }
    into.tokens.push(token);
    into.token_logprobs.push(logprob);
    into.top_logprobs.push(Object.fromEntries(alternatives));
    into.text_offset.push(offset);
    offset += codePoints(token);
  }
  return offset;
}

/** Characters as OpenAI and vLLM count them: code points (a string iterates by them). */
function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
