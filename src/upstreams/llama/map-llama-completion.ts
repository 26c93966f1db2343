// A whole `chat.completion` body from llama-server → the events its stream would have carried.
import { textEvent, type TokenLogprob, type UpstreamEvent } from "../../events/events.ts";
import { mapFinishReason, mapLlamaChunk } from "./map-llama-chunk.ts";

export interface LlamaCompletion {
  choices?: Array<{
    index?: number;
    finish_reason?: string | null;
    logprobs?: { content?: unknown } | null;
    message?: {
      content?: string | null;
      reasoning_content?: string | null;
      tool_calls?: Array<{ id?: string; function?: { name?: string; arguments?: string | Record<string, unknown> } }>;
    };
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } } | null;
  timings?: Record<string, number>;
}

/**
 * Pure: a whole `chat.completion` → the events a stream would have produced. For upstreams that
 * answer with one JSON body (servers that cannot stream tools, or a proxy in front that buffers).
 */
export function mapLlamaCompletion(body: LlamaCompletion, upstream: string): UpstreamEvent[] {
  const choice = body.choices?.find((c) => (c.index ?? 0) === 0);
  const events: UpstreamEvent[] = [];
  const msg = choice?.message;
  if (msg?.reasoning_content) events.push({ type: "reasoning", delta: msg.reasoning_content });
  if (msg?.content) {
    // The whole answer's entries, but not the end-of-generation token's (empty, and never streamed).
    const entries = choice?.logprobs?.content;
    events.push(textEvent(msg.content, Array.isArray(entries) ? (entries as TokenLogprob[]).filter((e) => e.token !== "") : undefined));
  }
  (msg?.tool_calls ?? []).forEach((tc, index) => {
    const args = tc.function?.arguments;
    events.push({
      type: "toolCall",
      index,
      ...(tc.id ? { id: tc.id } : {}),
      name: tc.function?.name ?? "",
      argumentsDelta: typeof args === "string" ? args : JSON.stringify(args ?? {}),
    });
  });
  events.push({ type: "finish", reason: mapFinishReason(choice?.finish_reason ?? "stop") });
  // Usage and timings take the same path as a stream's final chunk.
  events.push(...mapLlamaChunk({ usage: body.usage ?? { prompt_tokens: 0, completion_tokens: 0 }, ...(body.timings ? { timings: body.timings } : {}) }, {}, upstream));
  return events;
}
