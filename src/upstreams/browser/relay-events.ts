// The hub's JSON-lines answer for one relayed request → internal events.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { RelayLine } from "../../schemas/relay.ts";
import { bodyEvents, type BodyParser, type EventStreamReader } from "../../events/event-source.ts";
import type { UpstreamEvent } from "../../events/events.ts";
import { BENCH_MAX_MS } from "./loading-bench.ts";
import { mapWebLlmError } from "./map-web-llm-error.ts";
import { normalizeWebLlmChunk, type WebLlmChunk } from "./normalize-web-llm-chunk.ts";

/**
 * The hub's answer for one relayed request (the page's `chunk`, `done` and `error` messages, one JSON
 * object per line) → internal events, read straight from the body (no stream of events in between).
 * Text split anywhere is reassembled into lines first; the answer must end with `done` or `error`,
 * anything else is a broken relay and becomes an error event.
 *
 * `done` means the generation ended normally: without a finish chunk before it (web-llm always sends
 * one; other engines may not) it finishes with `stop`, so stream and non-stream answers both carry a
 * finish_reason. web-llm's usage chunk wins; `done.usage` counts only when no chunk carried usage.
 */
export function relayEvents(body: ReadableStream<Uint8Array>, upstream: string): EventStreamReader {
  return bodyEvents(body, (emit) => relayLineReader(upstream, emit));
}

/** relayEvents' pure core: body bytes in, events out through `emit`. */
export function relayLineReader(upstream: string, emit: (e: UpstreamEvent) => void): BodyParser {
  const decoder = new TextDecoder();
  let buffer = "";
  let ended = false;
  let finished = false;
  let counted = false;
  const handle = (line: string) => {
    if (ended || line.trim() === "") return;
    let msg: RelayLine;
    try {
      msg = JSON.parse(line) as RelayLine;
    } catch {
      ended = true;
      emit(broken(upstream, "the relay sent a line that is not JSON"));
      return;
    }
    const events = msg.type === "done" ? doneEvents(msg, upstream, finished, counted) : relayLineEvents(msg, upstream);
    for (const event of events) {
      emit(event);
      if (event.type === "error") ended = true;
      else if (event.type === "finish") finished = true;
      else if (event.type === "usage") counted = true;
    }
    if (msg.type === "done" || msg.type === "error") ended = true;
  };
  return {
    push(chunk) {
      // Only the new text is searched for line ends: the unfinished line before it has none.
      const text = decoder.decode(chunk, { stream: true });
      let start = 0;
      for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", start)) {
        handle(buffer + text.slice(start, nl));
        buffer = "";
        start = nl + 1;
      }
      buffer += text.slice(start);
    },
    end() {
      handle(buffer + decoder.decode());
      if (!ended) emit(broken(upstream, "the browser session's answer ended without done or error"));
    },
  };
}

/** Pure: one relay line → events. */
export function relayLineEvents(msg: RelayLine, upstream: string): UpstreamEvent[] {
  switch (msg.type) {
    case "chunk":
      return normalizeWebLlmChunk(msg.data as WebLlmChunk, upstream);
    case "done":
      // What `done` adds depends on what came before it: relayLineReader asks doneEvents.
      return [];
    case "error":
      return [{ type: "error", error: mapWebLlmError(msg.kind, msg.message, upstream, hubRetryAfter(msg)).toInfo() }];
    default:
      return [broken(upstream, "the relay sent an unknown message")];
  }
}

/** Pure: what `done` adds to the answer, given whether a finish and a usage event came before it. */
export function doneEvents(msg: Extract<RelayLine, { type: "done" }>, upstream: string, finished: boolean, counted: boolean): UpstreamEvent[] {
  const events: UpstreamEvent[] = finished ? [] : [{ type: "finish", reason: "stop" }];
  if (!counted && msg.usage) events.push(...normalizeWebLlmChunk({ choices: [], usage: msg.usage }, upstream));
  return events;
}

/**
 * The seconds the hub added to an error line for a session it benched (relays-in-flight.ts writes
 * that line itself, never the page's text): a whole number within the bench's cap, else none.
 */
export function hubRetryAfter(msg: RelayLine): number | undefined {
  const s = (msg as { retryAfter?: unknown }).retryAfter;
  return typeof s === "number" && Number.isInteger(s) && s >= 1 && s <= BENCH_MAX_MS / 1000 ? s : undefined;
}

function broken(upstream: string, why: string): UpstreamEvent {
  return { type: "error", error: new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream}: ${why}.` }).toInfo() };
}
