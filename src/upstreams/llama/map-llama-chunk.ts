// One parsed frame of llama-server's chat stream → internal events: the chat wire's mapping
// (../wire/map-chat-chunk.ts) with llama-server's errors, and its usage reported at once.
import type { UpstreamEvent } from "../../events/events.ts";
import type { ChatChunk } from "../wire/chat-chunk.ts";
import { mapChatChunk, usageEvent, type ChatChunkState } from "../wire/map-chat-chunk.ts";
import { mapLlamaErrorObject, type LlamaErrorBody } from "./map-llama-error.ts";

/**
 * Pure: one parsed frame → internal events. llama-server sends its usage once, in the last chunk
 * (with the timings, or after a finish chunk that carried them): it goes out with that chunk.
 */
export function mapLlamaChunk(chunk: ChatChunk, state: ChatChunkState, upstream: string): UpstreamEvent[] {
  if (chunk.error) {
    const error = chunk.error as LlamaErrorBody;
    const status = typeof error.code === "number" ? error.code : 500;
    return [{ type: "error", error: mapLlamaErrorObject(status, error, upstream).toInfo() }];
  }
  const events = mapChatChunk(chunk, state);
  if (chunk.usage) events.push(...usageEvent(state));
  return events;
}
