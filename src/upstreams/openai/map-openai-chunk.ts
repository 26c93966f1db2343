// One parsed frame of an OpenAI-compatible chat stream → internal events (vLLM's, SGLang's, Ollama's, LM Studio's quirks included).
import { textEvent, type Timings, type Usage, type UpstreamEvent } from "../../events/events.ts";
import { mapFinishReason } from "../llama/map-llama-chunk.ts";
import { mapOpenAiErrorObject, readErrorBody } from "./map-openai-error.ts";

/** One `chat.completion.chunk` (only what the proxy reads). */
export interface OpenAiChunk {
  object?: string;
  choices?: Array<{
    index?: number;
    finish_reason?: string | null;
    logprobs?: { content?: unknown } | null;
    delta?: {
      content?: string | null;
      /** DeepSeek's, SGLang's, llama.cpp's and older vLLM's name for the reasoning. */
      reasoning_content?: string | null;
      /** Current vLLM's and Ollama's name for it. */
      reasoning?: string | null;
      tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }> | null;
    } | null;
  }> | null;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null } | null;
  /** llama.cpp's, passed on by a gateway in front of it. */
  timings?: Timings;
  error?: unknown;
}

/** What a stream carries from frame to frame. */
export interface OpenAiChunkState {
  finished?: boolean;
  /**
   * The latest usage seen. Reported once, when the stream ends: servers differ in where it comes (a
   * last chunk with `choices: []` after `stream_options.include_usage`; on every chunk with vLLM's
   * `continuous_usage_stats`; zeros on each of Ollama's text-completion chunks before the real one).
   */
  usage?: Usage;
  /** llama.cpp's timings, when a gateway in front of one passes them on (on the usage chunk or the finish chunk). */
  timings?: Timings;
}

/** The reasoning in a delta. Servers in transition send both names with the same text: it counts once. */
function reasoningOf(delta: { reasoning_content?: string | null; reasoning?: string | null }): string {
  const a = typeof delta.reasoning_content === "string" ? delta.reasoning_content : "";
  const b = typeof delta.reasoning === "string" ? delta.reasoning : "";
  return a !== "" ? a : b;
}

/**
 * Pure: one parsed frame → events. Only the first choice is read; a second finish is dropped; usage
 * is kept in `state` (see OpenAiChunkState.usage). An error frame (`{"error":…}`, or older vLLM's
 * `{"object":"error",…}`) becomes an error event.
 */
export function mapOpenAiChunk(chunk: OpenAiChunk, state: OpenAiChunkState, upstream: string, path = "/chat/completions"): UpstreamEvent[] {
  if (chunk.error !== undefined || chunk.object === "error") {
    const err = readErrorBody(chunk) ?? { message: "unknown error" };
    const code = (chunk.error as { code?: unknown } | undefined)?.code ?? (chunk as { code?: unknown }).code;
    return [{ type: "error", error: mapOpenAiErrorObject(typeof code === "number" ? code : 500, err, upstream, path).toInfo() }];
  }
  const events: UpstreamEvent[] = [];
  for (const choice of chunk.choices ?? []) {
    if ((choice.index ?? 0) !== 0) continue;
    const delta = choice.delta;
    if (delta) {
      const reasoning = reasoningOf(delta);
      if (reasoning !== "") events.push({ type: "reasoning", delta: reasoning });
      if (typeof delta.content === "string" && delta.content !== "") events.push(textEvent(delta.content, choice.logprobs?.content));
      (delta.tool_calls ?? []).forEach((tc, i) => {
        events.push({
          type: "toolCall",
          // Servers that send whole calls (Ollama) may leave out the index: their position then.
          index: tc.index ?? i,
          ...(tc.id ? { id: tc.id } : {}),
          ...(tc.function?.name ? { name: tc.function.name } : {}),
          argumentsDelta: tc.function?.arguments ?? "",
        });
      });
    }
    if (choice.finish_reason && !state.finished) {
      state.finished = true;
      events.push({ type: "finish", reason: mapFinishReason(choice.finish_reason) });
    }
  }
  if (chunk.timings) state.timings = chunk.timings;
  if (chunk.usage) {
    const cached = chunk.usage.prompt_tokens_details?.cached_tokens;
    state.usage = {
      promptTokens: chunk.usage.prompt_tokens ?? 0,
      completionTokens: chunk.usage.completion_tokens ?? 0,
      ...(typeof cached === "number" ? { cachedTokens: cached } : {}),
    };
  }
  return events;
}

/** The usage event a finished stream reports, if its server sent any. */
export function usageEvent(state: OpenAiChunkState): UpstreamEvent[] {
  return state.usage ? [{ type: "usage", usage: state.usage, ...(state.timings ? { timings: state.timings } : {}) }] : [];
}
