// A whole `chat.completion` body → the events its stream would have carried (a server or gateway that answered without streaming).
import type { UpstreamEvent } from "../../events/events.ts";
import { mapOpenAiChunk, usageEvent, type OpenAiChunkState } from "./map-openai-chunk.ts";

interface OpenAiCompletion {
  choices?: Array<{
    index?: number;
    finish_reason?: string | null;
    logprobs?: { content?: unknown } | null;
    message?: {
      content?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string | Record<string, unknown> } }> | null;
    } | null;
  }> | null;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null } | null;
  error?: unknown;
  object?: string;
}

/** Pure: the body read as one chunk whose delta is its message (each tool call whole, its arguments a string). */
export function mapOpenAiCompletion(body: OpenAiCompletion, upstream: string): UpstreamEvent[] {
  const state: OpenAiChunkState = {};
  const chunk = {
    ...body,
    choices: (body.choices ?? []).map((c) => ({
      ...c,
      finish_reason: c.finish_reason ?? "stop",
      delta: c.message
        ? {
            ...c.message,
            tool_calls: (c.message.tool_calls ?? []).map((tc, index) => ({
              index,
              ...(tc.id ? { id: tc.id } : {}),
              function: { name: tc.function?.name ?? "", arguments: typeof tc.function?.arguments === "string" ? tc.function.arguments : JSON.stringify(tc.function?.arguments ?? {}) },
            })),
          }
        : null,
    })),
  };
  const events = mapOpenAiChunk(chunk, state, upstream);
  if (events.some((e) => e.type === "error")) return events;
  if (!state.finished) events.push({ type: "finish", reason: "stop" });
  return [...events, ...usageEvent(state)];
}
