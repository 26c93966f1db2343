// An OpenAI-compatible server's SSE body → internal events, incrementally (eventsource-parser).
import { createParser } from "eventsource-parser";
import type { UpstreamEvent } from "../../events/events.ts";
import { bodyEvents, type BodyParser, type EventStreamReader } from "../../events/event-source.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import type { ChatChunk } from "../wire/chat-chunk.ts";
import { usageEvent, type ChatChunkState } from "../wire/map-chat-chunk.ts";
import { mapOpenAiChunk } from "./map-openai-chunk.ts";
import { PrefillEcho } from "./prefill-echo.ts";

/** A frame larger than this is not a chat chunk; refuse it rather than buffer without bound. */
const MAX_FRAME_CHARS = 8 * 1024 * 1024;

export interface SseReaderOptions {
  /** Turns each parsed frame of a stream whose chunks are not chat chunks (text completions) into one. */
  asChat?: (chunk: object) => object;
  /** The endpoint read, for error messages (`/chat/completions`). */
  path?: string;
  /** A trailing assistant message this answer continues: the answer is made to begin with it (PrefillEcho). */
  prefill?: string;
}

/**
 * The push parser of one body: `data:` frames through mapOpenAiChunk, `:` comments skipped, `[DONE]`
 * the end. The usage goes out once the answer is over (at `[DONE]` or the body's end). A stream that
 * ends without a finish is an error, never a silent truncation; after the first error nothing more
 * is emitted.
 */
export function openAiSseReader(upstream: string, enqueue: (e: UpstreamEvent) => void, options: SseReaderOptions = {}): BodyParser & { pushText(text: string): void } {
  const state: ChatChunkState = {};
  const echo = options.prefill !== undefined ? new PrefillEcho(options.prefill) : undefined;
  const decoder = new TextDecoder();
  let failed = false;
  let done = false;
  let usageSent = false;

  const out = (e: UpstreamEvent) => {
    if (failed) return;
    if (e.type === "error") failed = true;
    enqueue(e);
  };
  const emit = (events: UpstreamEvent[]) => {
    for (const e of events) for (const x of echo ? echo.push(e) : [e]) out(x);
  };
  const fail = (message: string) => emit([{ type: "error", error: new ProxyError({ status: 502, code: "upstream_error", retryable: true, message }).toInfo() }]);
  const finish = () => {
    if (echo) for (const x of echo.end()) out(x);
    if (!failed && !state.finished) fail(`${upstream} ended the stream before the answer was finished.`);
    if (!failed && !usageSent) {
      usageSent = true;
      emit(usageEvent(state));
    }
  };

  const frame = (data: string) => {
    if (failed || done) return;
    if (data === "[DONE]") {
      done = true;
      return finish();
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      return fail(`${upstream} sent a stream frame that is not JSON.`);
    }
    if (!json || typeof json !== "object") return fail(`${upstream} sent a stream frame that is not an object.`);
    emit(mapOpenAiChunk((options.asChat ? options.asChat(json) : json) as ChatChunk, state, upstream, options.path));
  };

  const parser = createParser({
    maxBufferSize: MAX_FRAME_CHARS,
    onEvent: (msg) => frame(msg.data),
    onError: (err) => {
      if (err.type === "max-buffer-size-exceeded") fail(`${upstream} sent a stream frame larger than ${MAX_FRAME_CHARS} characters.`);
    },
  });

  const pushText = (text: string) => {
    if (!failed && !done) parser.feed(text);
  };
  return {
    push: (chunk) => pushText(decoder.decode(chunk, { stream: true })),
    pushText,
    end() {
      // A last frame without its blank line still counts.
      pushText(`${decoder.decode()}\n\n`);
      if (!done) finish();
    },
  };
}

/** A body read straight into events through openAiSseReader. */
export function openAiSseEvents(body: ReadableStream<Uint8Array>, upstream: string, options?: SseReaderOptions): EventStreamReader {
  return bodyEvents(body, (emit) => openAiSseReader(upstream, emit, options));
}
