// One parsed chunk of a chat stream → internal events: what every server that speaks OpenAI's chat
// wire sends alike. Error frames are each kind's own (map-llama-chunk.ts, map-openai-chunk.ts).
import { textEvent, type Timings, type Usage, type UpstreamEvent } from "../../events/events.ts";
import type { ChatChunk, ChatUsage } from "./chat-chunk.ts";
import { mapFinishReason } from "./map-finish-reason.ts";

/** What a stream carries from chunk to chunk. */
export interface ChatChunkState {
  finished?: boolean;
  /**
   * The latest usage seen. Servers differ in where it comes (a last chunk with `choices: []` after
   * `stream_options.include_usage`; on every chunk with vLLM's `continuous_usage_stats`; zeros on
   * each of Ollama's text-completion chunks before the real one), so when it is reported is the kind's.
   */
  usage?: Usage;
  /** llama.cpp's timings (on the finish chunk when no usage chunk follows), reported with the usage. */
  timings?: Timings;
}

/** The reasoning in a delta. Servers in transition send both names with the same text: it counts once. */
function reasoningOf(delta: { reasoning_content?: string | null; reasoning?: string | null }): string {
  const a = typeof delta.reasoning_content === "string" ? delta.reasoning_content : "";
  const b = typeof delta.reasoning === "string" ? delta.reasoning : "";
  return a !== "" ? a : b;
}

/** A usage object in the internal shape. */
export function usageOf(usage: ChatUsage): Usage {
  const cached = usage.prompt_tokens_details?.cached_tokens;
  return {
    promptTokens: usage.prompt_tokens ?? 0,
    completionTokens: usage.completion_tokens ?? 0,
    ...(typeof cached === "number" ? { cachedTokens: cached } : {}),
  };
}

/**
 * Pure: the first choice's reasoning, text (with its tokens' logprobs), tool-call deltas and finish
 * (a second finish is dropped); the usage and timings are kept in `state`, for the kind to report.
 */
export function mapChatChunk(chunk: ChatChunk, state: ChatChunkState): UpstreamEvent[] {
  const events: UpstreamEvent[] = [];
  for (const choice of chunk.choices ?? []) {
    if ((choice.index ?? 0) !== 0) continue;
    const delta = choice.delta;
    if (delta) {
      const reasoning = reasoningOf(delta);
      if (reasoning !== "") events.push({ type: "reasoning", delta: reasoning });
      // With `logprobs: true`, the entries of this chunk's tokens (OpenAI's shape already).
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
  if (chunk.usage) state.usage = usageOf(chunk.usage);
  return events;
}

/** The usage event of what `state` holds, if its server sent any usage. */
export function usageEvent(state: ChatChunkState): UpstreamEvent[] {
  return state.usage ? [{ type: "usage", usage: state.usage, ...(state.timings ? { timings: state.timings } : {}) }] : [];
}
