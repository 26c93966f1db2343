// llama-server's SSE body → internal events, incrementally (eventsource-parser, with a fast path).
import { createParser, type EventSourceParser, type ParseError } from "eventsource-parser";
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
  return new LlamaSseStream(upstream, enqueue, asChat);
}

/** The reader's state and its steps: bytes to whole lines, lines to frames (the SSE parser), frames to events. */
class LlamaSseStream implements LlamaSseReader {
  private readonly state: ChatChunkState = {};
  private finished = false;
  private done = false;
  private failed = false;
  // eventsource-parser (4.1.3) skips a line with an unknown field name when that line arrives split
  // across chunks, which would silently lose older builds' `error:` lines. So it is only ever fed
  // whole lines; the unfinished tail waits here (it is short: one partial line).
  private tail = "";
  // Bytes are decoded here rather than by a TextDecoderStream in front: one stream hop less per frame.
  private readonly decoder = new TextDecoder();
  // Repeated token frames are read from their delta alone (see repeated-token-frames.ts).
  private readonly repeated = new RepeatedTokenFrames();
  // True when the body read so far ends exactly at a frame's end: no partial line held here or in
  // the decoder, no event pending in the SSE parser. Only then may bytes be read as whole frames.
  private betweenFrames = true;
  private readonly parser: EventSourceParser;

  constructor(
    private readonly upstream: string,
    private readonly enqueue: (e: UpstreamEvent) => void,
    private readonly asChat: ChunkAdapter | undefined,
  ) {
    this.parser = createParser({
      maxBufferSize: MAX_FRAME_CHARS,
      onEvent: (msg) => this.frame(msg.data),
      onError: (err) => this.parseError(err),
    });
  }

  push(chunk: string | Uint8Array): void {
    if (this.failed) return;
    if (typeof chunk === "string") return this.pushText(chunk);
    let at = 0;
    while (at < chunk.length && !this.failed) {
      if (!this.betweenFrames || this.done) return this.pushText(this.decoder.decode(at === 0 ? chunk : chunk.subarray(at), { stream: true }));
      // Token deltas change neither `failed` nor `finished`: straight out.
      if (this.repeated.armed) at = this.repeated.readBytes(chunk, at, this.enqueue);
      if (at === chunk.length) return;
      // Anything else goes the full way one frame at a time (it may teach `repeated` a tail), so the
      // frames after it in the same read can still be read from their bytes.
      const end = frameEnd(chunk, at);
      this.pushText(this.decoder.decode(end < 0 ? chunk.subarray(at) : chunk.subarray(at, end), { stream: true }));
      at = end < 0 ? chunk.length : end;
    }
  }

  end(): void {
    // A last frame without its blank line still counts.
    if (!this.failed) this.parser.feed(`${this.tail}${this.decoder.decode()}\n\n`);
    if (!this.failed && !this.finished) this.fail("ended the stream before the answer was finished.");
  }

  /** Text to the SSE parser, whole lines only; the unfinished line waits in `tail`. */
  private pushText(text: string): void {
    // Only the new text is searched for a line end: the unfinished line before it has none, and
    // rescanning it would make a long line quadratic.
    const cutInText = lastLineBreak(text);
    if (cutInText === -1) {
      this.tail += text;
      this.betweenFrames = false;
      if (this.tail.length > MAX_FRAME_CHARS) this.fail(`sent a stream line longer than ${MAX_FRAME_CHARS} characters.`);
      return;
    }
    const complete = this.tail + text.slice(0, cutInText + 1);
    this.tail = text.slice(cutInText + 1);
    this.parser.feed(complete);
    this.betweenFrames = this.tail === "" && complete.charCodeAt(complete.length - 1) === 0x0a && complete.charCodeAt(complete.length - 2) === 0x0a;
  }

  /** One `data:` frame → events: `[DONE]`, a repeated token frame, or a JSON chunk mapped. */
  private frame(data: string): void {
    if (this.failed || this.done) return;
    if (data === "[DONE]") {
      this.done = true;
      return;
    }
    const quick = this.repeated.readData(data);
    if (quick !== undefined) {
      if (quick) this.emit([quick]);
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      return this.fail("sent a stream frame that is not JSON.");
    }
    if (!json || typeof json !== "object") return this.fail("sent a stream frame that is not an object.");
    const events = mapLlamaChunk(this.asChat ? this.asChat(json) : json, this.state, this.upstream);
    this.repeated.learn(data, events, json);
    this.emit(events);
  }

  /** What the SSE parser could not read: older builds' `error:` lines, and a frame past the cap. */
  private parseError(err: ParseError): void {
    if (err.type === "unknown-field" && err.field === "error") {
      // Older builds: `error: {"code":…,"message":…}` as its own SSE field.
      this.frame(`{"error":${err.value ?? "{}"}}`);
    } else if (err.type === "max-buffer-size-exceeded") {
      this.fail(`sent a stream frame larger than ${MAX_FRAME_CHARS} characters.`);
    }
  }

  private emit(events: UpstreamEvent[]): void {
    for (const e of events) {
      if (this.failed) return;
      if (e.type === "error") this.failed = true;
      else if (e.type === "finish") this.finished = true;
      this.enqueue(e);
    }
  }

  /** The stream's one error (a retryable 502 that names the upstream); nothing is emitted after it. */
  private fail(what: string): void {
    if (this.failed) return;
    this.failed = true;
    this.enqueue({ type: "error", error: new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${this.upstream} ${what}` }).toInfo() });
  }
}

/** llama-server's SSE body read straight into events (llamaSseReader behind bodyEvents). */
export function llamaSseEvents(body: ReadableStream<Uint8Array>, upstream: string, asChat?: ChunkAdapter): EventStreamReader {
  return bodyEvents(body, (emit) => llamaSseReader(upstream, emit, asChat));
}
