// The answer to a chat POST that asked for a stream, as events: the event stream itself, or one JSON
// body (a buffering proxy or gateway in between, a server that cannot stream this request) replayed
// as the events its stream would have carried.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { UpstreamEvent } from "../../events/events.ts";
import type { EventStreamReader } from "../../events/event-source.ts";
import type { ChatCompletion } from "./chat-chunk.ts";

/** How a kind reads each form of the answer. */
export interface ChatAnswerReaders {
  /** An event stream's body, into events. */
  stream(body: ReadableStream<Uint8Array>): EventStreamReader;
  /** A whole `chat.completion`, into the events its stream would have carried. */
  whole(body: ChatCompletion): UpstreamEvent[];
}

/**
 * `res` read by the form its content type says; any other content type is a retryable 502 that
 * names `server`, what the target URL should point at ("llama-server").
 */
export async function chatAnswerEvents(res: Response & { body: ReadableStream<Uint8Array> }, name: string, server: string, read: ChatAnswerReaders): Promise<EventStreamReader> {
  const contentType = res.headers.get("content-type") ?? "";
  if (contentType.includes("application/json")) {
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${name} answered with a JSON content type but a body that is not JSON.` });
    }
    return eventsOf(read.whole((body ?? {}) as ChatCompletion));
  }
  if (!contentType.includes("text/event-stream")) {
    await res.body.cancel().catch(() => {});
    throw new ProxyError({
      status: 502,
      code: "upstream_error",
      retryable: true,
      message: `${name} answered with ${contentType || "no content type"} instead of an event stream. Check that the target URL points at ${server}.`,
    });
  }
  return read.stream(res.body);
}

/** Events already known, read one at a time. */
function eventsOf(events: UpstreamEvent[]): EventStreamReader {
  let next = 0;
  return {
    read: async () => (next < events.length ? { done: false, value: events[next++]! } : { done: true, value: undefined }),
    cancel: async () => {
      next = events.length;
    },
  };
}
