// llama-server's SSE body → internal events, incrementally (eventsource-parser, with a fast path).
import { createParser } from "eventsource-parser";
import type { UpstreamEvent } from "../../events/events.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import type { ChatChunkState } from "../wire/map-chat-chunk.ts";
import { mapLlamaChunk } from "./map-llama-chunk.ts";
import { RepeatedTokenFrames } from "./repeated-token-frames.ts";
import { bodyEvents, type EventStreamReader } from "../../events/event-source.ts";

/** The index of the last \n or \r in `text`, or -1. A chunk nearly always ends with one, so scanning back wins over lastIndexOf. */
function lastLineBreak(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || c === 0x0d) return i;
  }
  return -1;
}

/** The index just past the first blank line (`\n\n`) at or after `from`, or -1. */
function frameEnd(bytes: Uint8Array, from: number): number {
  for (let i = bytes.indexOf(0x0a, from); i >= 0 && i + 1 < bytes.length; i = bytes.indexOf(0x0a, i + 1)) {
    if (bytes[i + 1] === 0x0a) return i + 2;
  }
  return -1;
}

/** A frame larger than this is not a chat chunk; refuse it rather than buffer without bound. */
const MAX_FRAME_CHARS = 8 * 1024 * 1024;

export interface LlamaSseReader {
  /** The next piece of the body, as it arrived. */
  push(chunk: string | Uint8Array): void;
  /** The body ended. */
  end(): void;
}

/** Turns a parsed frame of another llama-server stream (text completions) into the chat chunk shape. */
export type ChunkAdapter = (chunk: object) => object;

/**
 * llama-server's SSE body (bytes, or text already decoded) → internal events, incrementally: the
 * parser keeps only the unfinished line, so nothing already seen is parsed again. Handles `data:`
 * frames, older builds' `error:` lines, `:` keep-alive comments, `[DONE]`, and a stream that ends
 * without finishing (an error, never a silent truncation). After the first error nothing more is
 * emitted (older builds send `[DONE]` after their error line). Events go out through `enqueue`;
 * `asChat` adapts each parsed frame of a stream whose chunks are not chat chunks.
 */
export function llamaSseReader(upstream: string, enqueue: (e: UpstreamEvent) => void, asChat?: ChunkAdapter): LlamaSseReader {
  const state: ChatChunkState = {};
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
  // Repeated token frames are read from their delta alone (see repeated-token-frames.ts).
  const repeated = new RepeatedTokenFrames();
  // True when the body read so far ends exactly at a frame's end: no partial line held here or in
  // the decoder, no event pending in the SSE parser. Only then may bytes be read as whole frames.
  let betweenFrames = true;

  const frame = (data: string) => {
    if (failed || done) return;
    if (data === "[DONE]") {
      done = true;
      return;
    }
    const quick = repeated.readData(data);
    if (quick !== undefined) {
      if (quick) emit([quick]);
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
    const events = mapLlamaChunk(asChat ? asChat(json) : json, state, upstream);
    repeated.learn(data, events, json);
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

  const pushText = (text: string) => {
    // Only the new text is searched for a line end: the unfinished line before it has none, and
    // rescanning it would make a long line quadratic.
    const cutInText = lastLineBreak(text);
    if (cutInText === -1) {
      tail += text;
      betweenFrames = false;
      if (tail.length > MAX_FRAME_CHARS) {
        fail(new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} sent a stream line longer than ${MAX_FRAME_CHARS} characters.` }));
      }
      return;
    }
    const complete = tail + text.slice(0, cutInText + 1);
    tail = text.slice(cutInText + 1);
    parser.feed(complete);
    betweenFrames = tail === "" && complete.charCodeAt(complete.length - 1) === 0x0a && complete.charCodeAt(complete.length - 2) === 0x0a;
  };

  return {
    push(chunk) {
      if (failed) return;
      if (typeof chunk === "string") return pushText(chunk);
      let at = 0;
      while (at < chunk.length && !failed) {
        if (!betweenFrames || done) return pushText(decoder.decode(at === 0 ? chunk : chunk.subarray(at), { stream: true }));
        // Token deltas change neither `failed` nor `finished`: straight out.
        if (repeated.armed) at = repeated.readBytes(chunk, at, enqueue);
        if (at === chunk.length) return;
        // Anything else goes the full way one frame at a time (it may teach `repeated` a tail), so the
        // frames after it in the same read can still be read from their bytes.
        const end = frameEnd(chunk, at);
        pushText(decoder.decode(end < 0 ? chunk.subarray(at) : chunk.subarray(at, end), { stream: true }));
        at = end < 0 ? chunk.length : end;
      }
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

/** llama-server's SSE body read straight into events (llamaSseReader behind bodyEvents). */
export function llamaSseEvents(body: ReadableStream<Uint8Array>, upstream: string, asChat?: ChunkAdapter): EventStreamReader {
  return bodyEvents(body, (emit) => llamaSseReader(upstream, emit, asChat));
}
