// The one internal event stream. Every upstream adapter turns its wire format into these events and
// every response (stream or not) is encoded from them, so adapters never build OpenAI frames and the
// encoder never knows which upstream it serves.

import type { ErrorInfo } from "../errors/proxy-error.ts";

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter";

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
}

/**
 * One token's entry of OpenAI's `logprobs.content` (`{token, logprob, bytes, top_logprobs}`; llama.cpp
 * adds `id`). Upstreams already write this shape, so it is passed through as is.
 */
export type TokenLogprob = Record<string, unknown>;

/** llama.cpp's `timings` object, passed through under its own name. */
export type Timings = Record<string, number>;

/**
 * A text event, carrying `logprobs` when the upstream sent a non-empty array of token entries with
 * the text (when the client asked for them), and not the key at all otherwise.
 */
export function textEvent(delta: string, logprobs: unknown): UpstreamEvent {
  return Array.isArray(logprobs) && logprobs.length > 0 ? { type: "text", delta, logprobs: logprobs as TokenLogprob[] } : { type: "text", delta };
}

export type UpstreamEvent =
  /** `logprobs`: the entries of the tokens in `delta`, when the client asked for them. */
  | { type: "text"; delta: string; logprobs?: TokenLogprob[] }
  | { type: "reasoning"; delta: string }
  | {
      type: "toolCall";
      /** Position of the call in this response, 0-based, dense. */
      index: number;
      /** Upstream id, if it sent one; the encoder assigns the client-facing `call_…` id. */
      id?: string;
      /** Full name; a later event with a name replaces the earlier one, it never appends. */
      name?: string;
      argumentsDelta: string;
    }
  | { type: "finish"; reason: FinishReason }
  | { type: "usage"; usage: Usage; timings?: Timings }
  | { type: "error"; error: ErrorInfo };
