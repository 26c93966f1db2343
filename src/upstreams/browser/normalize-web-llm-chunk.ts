// One web-llm chunk → internal events, so a browser session's answer reads like llama-server's.
import { textEvent, type FinishReason, type Timings, type UpstreamEvent } from "../../events/events.ts";

/** One `chat.completion.chunk` or `text_completion` chunk as web-llm 0.2.86 yields it (only what the proxy reads). */
export interface WebLlmChunk {
  object?: string;
  choices?: Array<{
    index?: number;
    finish_reason?: string | null;
    /** `text_completion` chunks carry the new text here instead of in `delta`. */
    text?: string | null;
    /** With `logprobs: true`: `{content: [<the chunk's last token>]}` (none on the final chunk). */
    logprobs?: { content?: unknown } | null;
    delta?: {
      role?: string;
      content?: string | null;
      tool_calls?: unknown;
    };
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; extra?: Record<string, unknown> } | null;
  /** llama.cpp's own timings (a GGUF tab: wllama sends them beside `usage`, as llama-server does). */
  timings?: Record<string, unknown> | null;
}

/**
 * Pure: one web-llm chunk → internal events, so a client cannot tell a browser session from
 * llama.cpp. A `text_completion` chunk (engine.completions.create) reads like a chat one, with
 * `choices[].text` as the content. `role` (repeated on every chunk) and empty `content` carry nothing; `usage.extra`
 * becomes llama.cpp-style `timings`; `finish_reason: "abort"` (an interrupt nobody asked for here:
 * a cancelled client is no longer reading) is an error, never a fake finish.
 */
export function normalizeWebLlmChunk(chunk: WebLlmChunk, upstream: string): UpstreamEvent[] {
  const events: UpstreamEvent[] = [];
  for (const choice of chunk.choices ?? []) {
    if ((choice.index ?? 0) !== 0) continue;
    if (typeof choice.text === "string" && choice.text !== "") events.push(textEvent(choice.text, choice.logprobs?.content));
    const delta = choice.delta;
    if (delta) {
      if (typeof delta.content === "string" && delta.content !== "") events.push(textEvent(delta.content, choice.logprobs?.content));
      // web-llm's final `tool_calls` delta (Hermes models) repeats the JSON array it already
      // streamed as content; the tool-call rewriter reads that content and scores the calls, so
      // the repeat is dropped rather than announced twice.
    }
    if (choice.finish_reason === "abort") {
      events.push({
        type: "error",
        error: { status: 502, type: "api_error", code: "upstream_error", retryable: true, message: `${upstream} stopped generating before the answer was complete (interrupted in the browser).` },
      });
      return events;
    }
    if (choice.finish_reason) events.push({ type: "finish", reason: mapWebLlmFinishReason(choice.finish_reason) });
  }
  if (chunk.usage) {
    const timings = llamaTimingsOf(chunk.timings) ?? timingsOf(chunk.usage);
    events.push({
      type: "usage",
      usage: { promptTokens: tokenCount(chunk.usage.prompt_tokens), completionTokens: tokenCount(chunk.usage.completion_tokens) },
      ...(timings ? { timings } : {}),
    });
  }
  return events;
}

/**
 * A reported token count as a number the usage rows can hold: anything but a non-negative integer
 * is 0. The hub has already replaced counts outside what the request allows (relay-usage.ts); this
 * keeps a NaN from ever reaching a charge.
 */
export function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

export function mapWebLlmFinishReason(reason: string): FinishReason {
  switch (reason) {
    case "stop":
    case "length":
    case "tool_calls":
      return reason;
    default:
      return "stop";
  }
}

/** llama.cpp's `timings` as sent (its numbers only), or undefined when the chunk has none. */
function llamaTimingsOf(timings: WebLlmChunk["timings"]): Timings | undefined {
  if (!timings || typeof timings !== "object") return undefined;
  const out: Timings = {};
  for (const k of ["cache_n", "prompt_n", "prompt_ms", "prompt_per_second", "predicted_n", "predicted_ms", "predicted_per_second"]) {
    const v = timings[k];
    if (typeof v === "number" && Number.isFinite(v) && v >= 0) out[k] = v;
  }
  return Object.keys(out).length ? out : undefined;
}

/** web-llm's `usage.extra` (seconds and rates) in llama.cpp's `timings` names (milliseconds). */
function timingsOf(usage: NonNullable<WebLlmChunk["usage"]>): Timings | undefined {
  const extra = usage.extra;
  if (!extra) return undefined;
  const num = (k: string) => (typeof extra[k] === "number" && Number.isFinite(extra[k]) ? (extra[k] as number) : undefined);
  const prompt = tokenCount(usage.prompt_tokens);
  const predicted = tokenCount(usage.completion_tokens);
  const ttft = num("time_to_first_token_s");
  const tpot = num("time_per_output_token_s");
  const out: Timings = {};
  const set = (k: string, v: number | undefined) => {
    if (v !== undefined && Number.isFinite(v)) out[k] = Math.round(v * 1000) / 1000;
  };
  set("prompt_n", prompt);
  set("prompt_ms", ttft !== undefined ? ttft * 1000 : undefined);
  set("prompt_per_second", num("prefill_tokens_per_s"));
  set("predicted_n", predicted);
  set("predicted_ms", tpot !== undefined ? tpot * predicted * 1000 : undefined);
  set("predicted_per_second", num("decode_tokens_per_s"));
  return out;
}
