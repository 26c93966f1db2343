// A whole `chat.completion` body from llama-server → the events its stream would have carried.
import type { TokenLogprob, UpstreamEvent } from "../../events/events.ts";
import type { ChatCompletion } from "../wire/chat-chunk.ts";
import { completionAsChunk } from "../wire/completion-as-chunk.ts";
import { mapLlamaChunk } from "./map-llama-chunk.ts";

/**
 * Pure: a whole `chat.completion` → the events a stream would have produced. For upstreams that
 * answer with one JSON body (servers that cannot stream tools, or a proxy in front that buffers).
 * The body is read as its stream's one chunk, but for llama-server's differences: its logprobs list
 * the end-of-generation token too (empty, and never streamed), which is left out, and its usage is
 * reported whatever the body says (zeros when it has none).
 */
export function mapLlamaCompletion(body: ChatCompletion, upstream: string): UpstreamEvent[] {
  const choices = body.choices?.map((c) => {
    const entries = c.logprobs?.content;
    return Array.isArray(entries) ? { ...c, logprobs: { ...c.logprobs, content: (entries as TokenLogprob[]).filter((e) => e.token !== "") } } : c;
  });
  return mapLlamaChunk(completionAsChunk({ ...body, ...(choices ? { choices } : {}), usage: body.usage ?? { prompt_tokens: 0, completion_tokens: 0 } }), {}, upstream);
}
