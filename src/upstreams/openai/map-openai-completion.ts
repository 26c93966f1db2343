// A whole `chat.completion` body → the events its stream would have carried (a server or gateway that answered without streaming).
import type { UpstreamEvent } from "../../events/events.ts";
import type { ChatCompletion } from "../wire/chat-chunk.ts";
import { completionAsChunk } from "../wire/completion-as-chunk.ts";
import { usageEvent, type ChatChunkState } from "../wire/map-chat-chunk.ts";
import { mapOpenAiChunk } from "./map-openai-chunk.ts";

/** Pure: the body read as its stream's one chunk, then its usage, if it gave any. */
export function mapOpenAiCompletion(body: ChatCompletion, upstream: string): UpstreamEvent[] {
  const state: ChatChunkState = {};
  const events = mapOpenAiChunk(completionAsChunk(body), state, upstream);
  return events.some((e) => e.type === "error") ? events : [...events, ...usageEvent(state)];
}
