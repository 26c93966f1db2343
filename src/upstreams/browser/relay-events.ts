import { ProxyError } from "../../errors/proxy-error.ts";
import type { RelayLine } from "../../schemas/relay.ts";
import type { UpstreamEvent } from "../../stream/events.ts";
import { mapWebLlmError } from "./map-web-llm-error.ts";
import { normalizeWebLlmChunk, type WebLlmChunk } from "./normalize-web-llm-chunk.ts";

/**
 * The hub's answer for one relayed request (the page's `chunk`, `done` and `error` messages, one JSON
 * object per line) → internal events. Text split anywhere is reassembled into lines first; the stream
 * must end with `done` or `error`, anything else is a broken relay and becomes an error event.
 */
export function relayEvents(upstream: string): TransformStream<string, UpstreamEvent> {
  let buffer = "";
  let ended = false;
  const handle = (line: string, controller: TransformStreamDefaultController<UpstreamEvent>) => {
    if (ended || line.trim() === "") return;
    let msg: RelayLine;
    try {
      msg = JSON.parse(line) as RelayLine;
    } catch {
      ended = true;
      controller.enqueue(broken(upstream, "the relay sent a line that is not JSON"));
      return;
    }
    for (const event of relayLineEvents(msg, upstream)) {
      controller.enqueue(event);
      if (event.type === "error") ended = true;
    }
    if (msg.type === "done" || msg.type === "error") ended = true;
  };
  return new TransformStream({
    transform(text, controller) {
      buffer += text;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        handle(buffer.slice(0, nl), controller);
        buffer = buffer.slice(nl + 1);
      }
    },
    flush(controller) {
      handle(buffer, controller);
      if (!ended) controller.enqueue(broken(upstream, "the browser session's answer ended without done or error"));
    },
  });
}

/** Pure: one relay line → events. */
export function relayLineEvents(msg: RelayLine, upstream: string): UpstreamEvent[] {
  switch (msg.type) {
    case "chunk":
      return normalizeWebLlmChunk(msg.data as WebLlmChunk, upstream);
    case "done":
      return [];
    case "error":
      return [{ type: "error", error: mapWebLlmError(msg.kind, msg.message, upstream).toInfo() }];
    default:
      return [broken(upstream, "the relay sent an unknown message")];
  }
}

function broken(upstream: string, why: string): UpstreamEvent {
  return { type: "error", error: new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream}: ${why}.` }).toInfo() };
}
