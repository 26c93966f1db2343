// One parsed frame of an OpenAI-compatible chat stream → internal events: the chat wire's mapping
// (../wire/map-chat-chunk.ts, vLLM's, SGLang's, Ollama's and LM Studio's quirks included) with these
// servers' error frames.
import type { UpstreamEvent } from "../../events/events.ts";
import type { ChatChunk } from "../wire/chat-chunk.ts";
import { mapChatChunk, type ChatChunkState } from "../wire/map-chat-chunk.ts";
import { mapOpenAiErrorObject, readErrorBody } from "./map-openai-error.ts";

/**
 * Pure: one parsed frame → events; the usage is kept in `state` and reported when the stream ends
 * (openai-sse-reader.ts). An error frame (`{"error":…}`, or older vLLM's `{"object":"error",…}`)
 * becomes an error event.
 */
export function mapOpenAiChunk(chunk: ChatChunk, state: ChatChunkState, upstream: string, path = "/chat/completions"): UpstreamEvent[] {
  if (chunk.error !== undefined || chunk.object === "error") {
    const err = readErrorBody(chunk) ?? { message: "unknown error" };
    const code = (chunk.error as { code?: unknown } | undefined)?.code ?? (chunk as { code?: unknown }).code;
    return [{ type: "error", error: mapOpenAiErrorObject(typeof code === "number" ? code : 500, err, upstream, path).toInfo() }];
  }
  return mapChatChunk(chunk, state);
}
