import { createParser, type EventSourceParser } from "eventsource-parser";
import type { UpstreamEvent } from "../../stream/events.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import { mapLlamaChunk, type ChunkState } from "./map-llama-chunk.ts";

/** A frame larger than this is not a chat chunk; refuse it rather than buffer without bound. */
const MAX_FRAME_CHARS = 8 * 1024 * 1024;

/**
 * llama-server's SSE body (bytes, or text already decoded) → internal events, incrementally: the
 * parser keeps only the unfinished line, so nothing already seen is parsed again. Handles `data:` frames, older builds' `error:`
 * lines, `:` keep-alive comments, `[DONE]`, and a stream that ends without finishing (an error, never
 * a silent truncation). After the first error nothing more is emitted (older builds send `[DONE]`
 * after their error line).
 */
export function parseLlamaSse(upstream: string): TransformStream<string | Uint8Array, UpstreamEvent> {
  let parser: EventSourceParser;
  const state: ChunkState = {};
  let finished = false;
  let done = false;
  let failed = false;
  let out!: TransformStreamDefaultController<UpstreamEvent>;
  // eventsource-parser (4.1.3) skips a line with an unknown field name when that line arrives split
  // across chunks, which would silently lose older builds' `error:` lines. So it is only ever fed
  // whole lines; the unfinished tail waits here (it is short: one partial line).
  let tail = "";
  // Bytes are decoded here rather than by a TextDecoderStream in front: one stream hop less per frame.
  const decoder = new TextDecoder();

  const fail = (error: ProxyError) => {
    if (failed) return;
    failed = true;
    out.enqueue({ type: "error", error: error.toInfo() });
  };
  const emit = (events: UpstreamEvent[]) => {
    for (const e of events) {
      if (failed) return;
      if (e.type === "error") {
        failed = true;
      } else if (e.type === "finish") {
        finished = true;
      }
      out.enqueue(e);
    }
  };
  const frame = (data: string) => {
    if (failed || done) return;
    if (data === "[DONE]") {
      done = true;
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      fail(new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} sent a stream frame that is not JSON.` }));
      return;
    }
    if (!json || typeof json !== "object") {
      fail(new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} sent a stream frame that is not an object.` }));
      return;
    }
    emit(mapLlamaChunk(json, state, upstream));
  };

  return new TransformStream<string | Uint8Array, UpstreamEvent>({
    start(controller) {
      out = controller;
      parser = createParser({
        maxBufferSize: MAX_FRAME_CHARS,
        onEvent: (msg) => frame(msg.data),
        onError: (err) => {
          if (err.type === "unknown-field" && err.field === "error") {
            // Older builds: `error: {"code":…,"message":…}` as its own SSE field.
            frame(`{"error":${err.value ?? "{}"}}`);
          } else if (err.type === "max-buffer-size-exceeded") {
            fail(new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} sent a stream frame larger than ${MAX_FRAME_CHARS} characters.` }));
          }
        },
      });
    },
    transform(chunk) {
      if (failed) return;
      const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      const buffered = tail + text;
      const cut = Math.max(buffered.lastIndexOf("\n"), buffered.lastIndexOf("\r"));
      if (cut === -1) {
        tail = buffered;
        if (tail.length > MAX_FRAME_CHARS) {
          fail(new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} sent a stream line longer than ${MAX_FRAME_CHARS} characters.` }));
        }
        return;
      }
      tail = buffered.slice(cut + 1);
      parser.feed(buffered.slice(0, cut + 1));
    },
    flush() {
      // A last frame without its blank line still counts.
      if (!failed) parser.feed(`${tail}${decoder.decode()}\n\n`);
      if (!failed && !finished) {
        fail(new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} ended the stream before the answer was finished.` }));
      }
    },
  });
}
