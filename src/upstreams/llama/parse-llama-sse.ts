import { createParser } from "eventsource-parser";
import type { UpstreamEvent } from "../../stream/events.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import { mapLlamaChunk, type ChunkState } from "./map-llama-chunk.ts";

/** How llama-server opens a frame that carries one token of content or reasoning. */
const CONTENT_HEAD = '{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"';
const REASONING_HEAD = '{"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"';
/** A string literal's body with an escape, a quote or a raw control character: read with JSON.parse. */
const NOT_PLAIN = /[\\"\u0000-\u001f]/;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index of the last \n or \r in `text`, or -1. A chunk nearly always ends with one, so scanning back wins over lastIndexOf. */
function lastLineBreak(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || c === 0x0d) return i;
  }
  return -1;
}

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
  let reader!: LlamaSseReader;
  return new TransformStream<string | Uint8Array, UpstreamEvent>({
    start(controller) {
      reader = llamaSseReader(upstream, (e) => controller.enqueue(e));
    },
    transform(chunk) {
      reader.push(chunk);
    },
    flush() {
      reader.end();
    },
  });
}

export interface LlamaSseReader {
  /** The next piece of the body, as it arrived. */
  push(chunk: string | Uint8Array): void;
  /** The body ended. */
  end(): void;
}

/** parseLlamaSse's pure core: body pieces in, events out through `enqueue`, no stream in between. */
export function llamaSseReader(upstream: string, enqueue: (e: UpstreamEvent) => void): LlamaSseReader {
  const state: ChunkState = {};
  let finished = false;
  let done = false;
  let failed = false;
  // eventsource-parser (4.1.3) skips a line with an unknown field name when that line arrives split
  // across chunks, which would silently lose older builds' `error:` lines. So it is only ever fed
  // whole lines; the unfinished tail waits here (it is short: one partial line).
  let tail = "";
  // Bytes are decoded here rather than by a TextDecoderStream in front: one stream hop less per frame.
  const decoder = new TextDecoder();

  const fail = (error: ProxyError) => {
    if (failed) return;
    failed = true;
    enqueue({ type: "error", error: error.toInfo() });
  };
  const emit = (events: UpstreamEvent[]) => {
    for (const e of events) {
      if (failed) return;
      if (e.type === "error") {
        failed = true;
      } else if (e.type === "finish") {
        finished = true;
      }
      enqueue(e);
    }
  };
  // Nearly every frame is one content (or reasoning) delta whose other bytes repeat those of the frame
  // before. Once such a frame was parsed in full and gave nothing but its delta, later frames with the
  // same opening and the same tail differ only in the delta's string literal: read just that literal
  // (as is when it has no escapes, else JSON.parse of the literal alone) instead of the whole frame.
  let knownTail: string | null = null;
  // slice + === rather than startsWith/endsWith: several times faster in V8 on these short strings.
  const headOf = (data: string): 0 | 1 | -1 => (data.slice(0, CONTENT_HEAD.length) === CONTENT_HEAD ? 0 : data.slice(0, REASONING_HEAD.length) === REASONING_HEAD ? 1 : -1);
  /** The delta in `data[start, end)` (between the literal's quotes), or null when that is not one JSON string. */
  const literal = (data: string, start: number, end: number): string | null => {
    const raw = data.slice(start, end);
    if (!NOT_PLAIN.test(raw)) return raw;
    try {
      const v: unknown = JSON.parse(data.slice(start - 1, end + 1));
      return typeof v === "string" ? v : null;
    } catch {
      return null;
    }
  };
  const quick = (data: string): boolean => {
    if (knownTail === null) return false;
    const kind = headOf(data);
    if (kind < 0) return false;
    const start = kind === 0 ? CONTENT_HEAD.length : REASONING_HEAD.length;
    const end = data.length - knownTail.length - 1;
    if (end < start || data.charCodeAt(end) !== QUOTE || data.slice(end + 1) !== knownTail) return false;
    const text = literal(data, start, end);
    if (text === null) return false;
    if (text !== "") emit([{ type: kind === 0 ? "text" : "reasoning", delta: text }]);
    return true;
  };
  const learn = (data: string, events: UpstreamEvent[], json: { usage?: unknown; timings?: unknown; error?: unknown }) => {
    knownTail = null;
    const kind = headOf(data);
    if (kind < 0 || json.usage !== undefined || json.timings !== undefined || json.error !== undefined) return;
    const start = kind === 0 ? CONTENT_HEAD.length : REASONING_HEAD.length;
    let end = start;
    while (end < data.length && data.charCodeAt(end) !== QUOTE) end += data.charCodeAt(end) === BACKSLASH ? 2 : 1;
    if (end >= data.length) return;
    const text = literal(data, start, end);
    const only = text !== null && (events.length === 0 ? text === "" : events.length === 1 && events[0]!.type === (kind === 0 ? "text" : "reasoning") && (events[0] as { delta: string }).delta === text);
    if (only) knownTail = data.slice(end + 1);
  };

  const frame = (data: string) => {
    if (failed || done) return;
    if (data === "[DONE]") {
      done = true;
      return;
    }
    if (quick(data)) return;
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
    const events = mapLlamaChunk(json, state, upstream);
    learn(data, events, json);
    emit(events);
  };

  const parser = createParser({
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

  return {
    push(chunk) {
      if (failed) return;
      const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      // Only the new text is searched for a line end: the unfinished line before it has none, and
      // rescanning it would make a long line quadratic.
      const cutInText = lastLineBreak(text);
      if (cutInText === -1) {
        tail += text;
        if (tail.length > MAX_FRAME_CHARS) {
          fail(new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} sent a stream line longer than ${MAX_FRAME_CHARS} characters.` }));
        }
        return;
      }
      const complete = tail + text.slice(0, cutInText + 1);
      tail = text.slice(cutInText + 1);
      parser.feed(complete);
    },
    end() {
      // A last frame without its blank line still counts.
      if (!failed) parser.feed(`${tail}${decoder.decode()}\n\n`);
      if (!failed && !finished) {
        fail(new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} ended the stream before the answer was finished.` }));
      }
    },
  };
}

/**
 * llama-server's SSE body as a stream of events, pulled: each read of the events reads the body until
 * at least one event comes out (or the body ends). The same as `body.pipeThrough(parseLlamaSse())`
 * without a pipe and a writable side per chunk; cancelling it cancels the body.
 */
export function llamaSseEvents(body: ReadableStream<Uint8Array>, upstream: string): ReadableStream<UpstreamEvent> {
  const source = body.getReader();
  let out!: ReadableStreamDefaultController<UpstreamEvent>;
  let produced = 0;
  const sse = llamaSseReader(upstream, (e) => {
    produced++;
    out.enqueue(e);
  });
  return new ReadableStream<UpstreamEvent>(
    {
      start(controller) {
        out = controller;
      },
      async pull(controller) {
        const before = produced;
        while (produced === before) {
          const r = await source.read();
          if (r.done) {
            sse.end();
            controller.close();
            return;
          }
          sse.push(r.value);
        }
      },
      cancel(reason) {
        return source.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
