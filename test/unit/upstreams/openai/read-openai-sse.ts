// Test helper: the events an OpenAI-compatible SSE body gives, pushed in pieces as they would arrive.
import type { UpstreamEvent } from "../../../../src/events/events.ts";
import { openAiSseReader, type SseReaderOptions } from "../../../../src/upstreams/openai/openai-sse-reader.ts";

export function readOpenAiSse(parts: Array<string | Uint8Array>, options?: SseReaderOptions, upstream = "openai:test"): UpstreamEvent[] {
  const out: UpstreamEvent[] = [];
  const reader = openAiSseReader(upstream, (e) => out.push(e), options);
  for (const p of parts) {
    if (typeof p === "string") reader.pushText(p);
    else reader.push(p);
  }
  reader.end();
  return out;
}

/** `text` as bytes cut every `size` bytes (a UTF-8 character may be split). */
export function splitBytes(text: string, size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) parts.push(bytes.subarray(i, i + size));
  return parts;
}
