// One parsed frame of llama-server's chat stream → internal events.
import { textEvent, type FinishReason, type Timings, type UpstreamEvent } from "../../events/events.ts";
import { mapLlamaErrorObject, type LlamaErrorBody } from "./map-llama-error.ts";

/** One `chat.completion.chunk` as llama-server sends it (only what the proxy reads). */
interface LlamaChunk {
  choices?: Array<{
    index?: number;
    finish_reason?: string | null;
    logprobs?: { content?: unknown } | null;
    delta?: {
      content?: string | null;
      reasoning_content?: string | null;
      tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
    };
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | null;
  timings?: Timings;
  error?: LlamaErrorBody;
}

export interface ChunkState {
  /** llama.cpp puts `timings` on the finish chunk when no usage chunk follows; keep them for usage. */
  timings?: Timings;
}

export function mapFinishReason(reason: string): FinishReason {
  switch (reason) {
    case "stop":
    case "length":
    case "tool_calls":
    case "content_filter":
      return reason;
    case "function_call":
      return "tool_calls";
    default:
      // "eos", "abort", anything new: the generation ended normally as far as the client can tell.
      return "stop";
  }
}

/** Pure: one parsed frame → internal events. */
export function mapLlamaChunk(chunk: LlamaChunk, state: ChunkState, upstream: string): UpstreamEvent[] {
  if (chunk.error) {
    const status = typeof chunk.error.code === "number" ? chunk.error.code : 500;
    return [{ type: "error", error: mapLlamaErrorObject(status, chunk.error, upstream).toInfo() }];
  }
  const events: UpstreamEvent[] = [];
  if (chunk.timings) state.timings = chunk.timings;
  for (const choice of chunk.choices ?? []) {
    if ((choice.index ?? 0) !== 0) continue;
    const delta = choice.delta;
    if (delta) {
      if (typeof delta.reasoning_content === "string" && delta.reasoning_content !== "") {
        events.push({ type: "reasoning", delta: delta.reasoning_content });
      }
      // With `logprobs: true`, the entries of this chunk's tokens (OpenAI's shape already).
      if (typeof delta.content === "string" && delta.content !== "") events.push(textEvent(delta.content, choice.logprobs?.content));
      for (const tc of delta.tool_calls ?? []) {
        events.push({
          type: "toolCall",
          index: tc.index ?? 0,
          ...(tc.id ? { id: tc.id } : {}),
          ...(tc.function?.name ? { name: tc.function.name } : {}),
          argumentsDelta: tc.function?.arguments ?? "",
        });
      }
    }
    if (choice.finish_reason) events.push({ type: "finish", reason: mapFinishReason(choice.finish_reason) });
  }
  if (chunk.usage) {
    const cached = chunk.usage.prompt_tokens_details?.cached_tokens;
    events.push({
      type: "usage",
      usage: {
        promptTokens: chunk.usage.prompt_tokens ?? 0,
        completionTokens: chunk.usage.completion_tokens ?? 0,
        ...(cached !== undefined ? { cachedTokens: cached } : {}),
      },
      ...(state.timings ? { timings: state.timings } : {}),
    });
  }
  return events;
}
