// The Worker's per-request stream pipeline, assembled from the same modules routing/pipeline.ts and
// chat-completions.ts use (as llama-upstream.ts assembles them): upstream bytes → llamaSseEvents (parse, normalize) →
// EventReader (timeouts) → pullThrough + ToolCallEvents (rewrite, when the request has tools) →
// ChunkEncoder + sseResponse (encode, the committed body) → bytes read by a client.
import { Deadlines } from "../../src/lib/deadlines.ts";
import { EventReader } from "../../src/routing/attempt/event-reader.ts";
import { ChunkEncoder } from "../../src/api/chat/chunk-encoder.ts";
import type { EventPull } from "../../src/events/event-source.ts";
import { pullThrough } from "../../src/events/pull-through.ts";
import { chatSseEncoder } from "../../src/api/chat/chat-sse-encoder.ts";
import { sseResponse } from "../../src/responders/sse-response.ts";
import { ToolCallEvents, type ToolDefinition } from "../../src/toolcalls/index.ts";
import { llamaSseEvents, llamaSseReader } from "../../src/upstreams/llama/parse-llama-sse.ts";
import { ToolCallStreamRewriter } from "../../src/toolcalls/index.ts";
import type { UpstreamEvent } from "../../src/events/events.ts";
import { ByteQueue } from "../../src/responders/byte-queue.ts";

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
  // The request's timer, as runChat makes it (the commit grace is its first deadline).
  const deadlines = new Deadlines(10_000);
  const reader = new EventReader(llamaSseEvents(upstream, "bench"), "bench", TIMEOUTS, Date.now(), deadlines);
  let first = await reader.next();
  let events: EventPull = reader;
  if (first && tools) {
    events = pullThrough(first, reader, new ToolCallEvents(tools));
    first = await events.next();
  }
  if (!first) return 0;
  const res = await sseResponse({
    start: Promise.resolve({ first, events, headers: {} }),
    encoder: chatSseEncoder(new ChunkEncoder(META, () => ({ target: "bench", attempts: 1 }))),
    commitMs: 10_000,
    deadlines,
    heartbeatMs: 15_000,
    abort() {},
    waitUntil() {},
  });
  let bytes = 0;
  const body = res.body!.getReader();
  for (let r = await body.read(); !r.done; r = await body.read()) bytes += r.value.byteLength;
  return bytes;
}

/**
 * The same work without any stream between the stages — the pure pipeline: llamaSseReader (SSE
 * lines, JSON, mapLlamaChunk: parse and normalize) → ToolCallStreamRewriter (rewrite,
 * with tools; the steps ToolCallEvents takes) → chatSseEncoder (encode) → UTF-8 bytes (a ByteQueue taken
 * after every frame, as BodyWriter does when the client keeps up).
 */
export function runPure(chunks: Uint8Array[], tools?: ToolDefinition[]): number {
  const bytes = new ByteQueue();
  const sse = chatSseEncoder(new ChunkEncoder(META, () => ({ target: "bench", attempts: 1 })));
  const rewriter = tools ? new ToolCallStreamRewriter(tools) : null;
  let out = 0;
  const write = (e: UpstreamEvent) => {
    sse.encode(e, bytes);
    out += bytes.take()?.byteLength ?? 0;
  };
  const event = (e: UpstreamEvent) => {
    if (!rewriter) return write(e);
    if (e.type === "text") for (const x of rewriter.push(e.delta)) write(x);
    else if (e.type === "finish") {
      for (const x of rewriter.flush()) write(x);
      write({ type: "finish", reason: rewriter.finishReason(e.reason) });
    } else write(e);
  };
  const reader = llamaSseReader("bench", event);
  for (const c of chunks) reader.push(c);
  reader.end();
  sse.end(bytes);
  return out + (bytes.take()?.byteLength ?? 0);
}
