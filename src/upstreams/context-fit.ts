// Whether a request fits a target's context window, judged from a low estimate of its prompt's
// tokens: one check for routing (llama-server targets, try-targets.ts) and the SessionHub (a browser
// session's window, relay-dispatch.ts). Here, below both, so either may import it.
import { ProxyError } from "../errors/proxy-error.ts";
import { contextLengthMessage } from "../errors/context-length.ts";

/** What the fit of a request is judged by: its prompt's size and the answer room it asks for. */
export interface PromptSize {
  /** Characters of the prompt's JSON (messages and tools). */
  chars: number;
  maxTokens?: number;
}

/**
 * Where a target stands for a request:
 * - fits: the prompt and max_tokens fit (or nothing is known of its window);
 * - prompt: the prompt fits, max_tokens does not (llama-server would stop at the window with
 *   `finish_reason: "length"`): tried after the ones that fit;
 * - too-long: the prompt alone does not fit: skipped, with the error it would have answered.
 */
export type Fit = { fit: "fits" } | { fit: "prompt" } | { fit: "too-long"; error: ProxyError };

/**
 * Tokens per character a prompt has at least, before a server's tokenizer is learned: chat JSON
 * (keys, quotes, escapes) runs 3 to 5 characters a token; 0.2 errs towards sending.
 */
export const UNLEARNED_TOKENS_PER_CHAR = 0.2;
/** A learned ratio is taken 15 % low, so a prompt that may fit is sent (the server's own 400 then moves on). */
export const LEARNED_MARGIN = 0.85;

/** The low estimate of a prompt's tokens at a server (its learned tokens per character, or none yet). */
export function promptTokensLow(chars: number, tokensPerChar: number | undefined): number {
  return Math.floor(chars * (tokensPerChar === undefined ? UNLEARNED_TOKENS_PER_CHAR : tokensPerChar * LEARNED_MARGIN));
}

/** How the request fits a target whose per-request context is `window` tokens (undefined: unknown). */
export function contextFit(size: PromptSize, tokensPerChar: number | undefined, window: number | undefined): Fit {
  return tokensFit(promptTokensLow(size.chars, tokensPerChar), size.maxTokens, window);
}

/** How a prompt of `tokens` (a low estimate) and `maxTokens` of answer fit a window of `window` tokens (undefined: unknown). */
export function tokensFit(tokens: number, maxTokens: number | undefined, window: number | undefined): Fit {
  if (window === undefined) return { fit: "fits" };
  if (tokens >= window) {
    return {
      fit: "too-long",
      error: new ProxyError({ status: 400, code: "context_length_exceeded", param: "messages", retryable: true, message: contextLengthMessage(tokens, window) }),
    };
  }
  return tokens + (maxTokens ?? 0) > window ? { fit: "prompt" } : { fit: "fits" };
}
