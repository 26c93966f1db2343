// An API's own event encoder (Responses, Messages, text completions) in both responders: its
// events framed as SSE when streaming, gathered into one body when not.
import type { Aggregator } from "./json-response.ts";
import type { UpstreamEvent } from "../events/events.ts";
import type { ErrorInfo } from "../errors/proxy-error.ts";
import type { ByteQueue } from "./byte-queue.ts";
import type { SseEncoder } from "./sse-response.ts";

/**
 * The encoder of an API that turns internal events into its own event objects (Responses, Messages,
 * text completions): the stream frames them, the non-stream body is the same encoder gathered.
 */
export interface EventEncoder<E> {
  encode(event: UpstreamEvent): E[];
  end(): E[];
  readonly failed: ErrorInfo | null;
}

/** `data: <event>` per event (OpenAI framing). */
export const dataFrame = (e: unknown): string => `data: ${JSON.stringify(e)}\n\n`;
/** `event: <type>` and `data: <event>` per event (Responses and Anthropic framing). */
export const namedFrame = (e: { type: string }): string => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

/**
 * The SSE body of an EventEncoder: each event framed, `trailer` after the end (e.g. `data: [DONE]`).
 * `beforeEnd` runs once the closing events are known and before they are written (a stored response
 * is saved there, so a client that chains to it on seeing the last event finds it).
 */
export function framedSse<E>(encoder: EventEncoder<E>, frame: (e: E) => string, trailer = "", beforeEnd?: () => Promise<void>): SseEncoder {
  const frames = (events: E[], out: ByteQueue) => {
    for (const e of events) out.text(frame(e));
  };
  return {
    encode: (event, out) => frames(encoder.encode(event), out),
    end: (out) => {
      const closing = encoder.end();
      const write = () => {
        frames(closing, out);
        if (trailer) out.text(trailer);
      };
      return beforeEnd ? beforeEnd().then(write) : write();
    },
    get failed() {
      return encoder.failed !== null;
    },
  };
}

/** The non-stream side of an EventEncoder: events fed to it, its own body built at the end. */
export function gathered<E>(encoder: EventEncoder<E>): Aggregator {
  return {
    push: (event) => void encoder.encode(event),
    get failed() {
      return encoder.failed;
    },
  };
}
