// The Worker's per-request stream pipeline, assembled from the same modules start-chat.ts and
// chat-completions.ts use (as llama-upstream.ts assembles them): upstream bytes → parseLlamaSse (parse, normalize) →
// EventReader (timeouts) → pullThrough + tool-call transform (rewrite, when the request has tools) →
// ChunkEncoder + sseResponse (encode, the committed body) → bytes read by a client.
import { EventReader } from "../../src/routing/event-reader.ts";
import { ChunkEncoder } from "../../src/stream/chunk-encoder.ts";
import type { EventPull } from "../../src/stream/event-source.ts";
import { pullThrough } from "../../src/stream/pull-through.ts";
import { chatSseEncoder, sseResponse } from "../../src/stream/sse-response.ts";
import { createToolCallTransform, type ToolDefinition } from "../../src/toolcalls/index.ts";
import { parseLlamaSse } from "../../src/upstreams/llama/parse-llama-sse.ts";

const TIMEOUTS = { firstTokenMs: 60_000, idleMs: 60_000, totalMs: 600_000 };
const META = { id: "chatcmpl-bench", created: 0, model: "bench", includeUsage: false };

/** Runs one recorded stream (one Uint8Array per network read) through the pipeline; returns the bytes a client reads. */
export async function runPipeline(chunks: Uint8Array[], tools?: ToolDefinition[]): Promise<number> {
  let i = 0;
  const upstream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) c.enqueue(chunks[i++]!);
      else c.close();
    },
  });
  const reader = new EventReader(upstream.pipeThrough(parseLlamaSse("bench")).getReader(), "bench", TIMEOUTS, Date.now());
  let first = await reader.next();
  let events: EventPull = reader;
  if (first && tools) {
    events = pullThrough(first, reader, createToolCallTransform(tools));
    first = await events.next();
  }
  if (!first) return 0;
  const res = await sseResponse({
    start: Promise.resolve({ first, events, headers: {} }),
    encoder: chatSseEncoder(new ChunkEncoder(META, () => ({ target: "bench", attempts: 1 }))),
    headers: new Headers(),
    commitMs: 10_000,
    heartbeatMs: 15_000,
    abort() {},
    waitUntil() {},
  });
  let bytes = 0;
  const body = res.body!.getReader();
  for (let r = await body.read(); !r.done; r = await body.read()) bytes += r.value.byteLength;
  return bytes;
}
