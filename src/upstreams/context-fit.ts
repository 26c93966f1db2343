// Whether a request fits a target's context window: one check for routing (llama-server targets,
// from an estimate or the server's own count: routing/placement/context-check.ts) and the
// SessionHub (a browser session's window, from a low estimate: relay-dispatch.ts). Here, below both,
// so either may import it.
import { ProxyError } from "../errors/proxy-error.ts";
import { contextLengthMessage } from "../errors/context-length.ts";

/** What the fit of a request is judged by: its prompt's size and the answer room it asks for. */
export interface PromptSize {
  /** Characters of the prompt's JSON (messages and tools). */
  chars: number;
  maxTokens?: number;
  /**
   * The prompt's prefixes at message boundaries (hash and characters up to each), shortest first:
   * a server's exact count is cached under the last one's hash, and an earlier one's count makes
   * the estimate of a conversation's next turn (placement/prompt-prefixes.ts).
   */
  prefixes?: readonly { hash: string; chars: number }[];
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
 * Tokens per character a prompt has at least, for a window that is not a llama-server's (a browser
 * session's engine, whose tokenizer Switchyard cannot ask): chat JSON (keys, quotes, escapes) runs 3
 * to 5 characters a token; 0.2 errs towards sending.
 */
export const UNLEARNED_TOKENS_PER_CHAR = 0.2;

/** The low estimate of a prompt's tokens where no tokenizer can be asked (browser sessions). */
export function promptTokensLow(chars: number): number {
  return Math.floor(chars * UNLEARNED_TOKENS_PER_CHAR);
}

/**
 * How far an estimate must be from a window to decide alone: at most a half of it fits, at least
 * twice it does not. Between the two the server's own count decides (docs/reliability.md, "the
 * window rule"): an estimate from characters is off by less than this for chat JSON, and the count
 * is one fast call to a server on the same network, made only for prompts near a window.
 */
export const CLEAR_FACTOR = 2;

/**
 * How a prompt fits a window judged from an estimate of its tokens: a Fit when the estimate is
 * clearly below or above the window (CLEAR_FACTOR), "count" when only the server's own count can
 * tell. An unknown window fits.
 */
export function estimateFit(estimate: number, maxTokens: number | undefined, window: number | undefined): Fit | "count" {
  if (window === undefined) return { fit: "fits" };
  if (estimate * CLEAR_FACTOR <= window) return tokensFit(estimate, maxTokens, window);
  if (estimate >= window * CLEAR_FACTOR) {
    const error = tooLong(estimate, window);
    error.message += " (The count is Switchyard's estimate from the prompt's size: it is over twice the window.)";
    return { fit: "too-long", error };
  }
  return "count";
}

/** How a prompt of `tokens` (a low estimate) and `maxTokens` of answer fit a window of `window` tokens (undefined: unknown). */
export function tokensFit(tokens: number, maxTokens: number | undefined, window: number | undefined): Fit {
  if (window === undefined) return { fit: "fits" };
  if (tokens >= window) {
    return { fit: "too-long", error: tooLong(tokens, window) };
  }
  return tokens + (maxTokens ?? 0) > window ? { fit: "prompt" } : { fit: "fits" };
}

function tooLong(tokens: number, window: number): ProxyError {
  return new ProxyError({ status: 400, code: "context_length_exceeded", param: "messages", retryable: true, message: contextLengthMessage(tokens, window) });
}
