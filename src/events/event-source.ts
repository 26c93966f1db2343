// How an attempt's internal events are read: pulled one at a time, parsed straight from the
// upstream body with no stream of events in between.
import type { UpstreamEvent } from "./events.ts";

/** A pull source of internal events (an upstream attempt, possibly wrapped by a rewriter). */
export interface EventPull {
  next(): Promise<UpstreamEvent | null>;
  /**
   * The next event if it is already here (parsed from a chunk read before), else undefined: the
   * caller then awaits `next()`, which also reports the end. A caller can so take all of a chunk's
   * events before it writes (the SSE pump sends them in one write, not one each) and without a
   * promise per event through the layers.
   */
  nextNow?(): UpstreamEvent | undefined;
  cancel(): void;
}

/**
 * An attempt's events, read one at a time. A `ReadableStream<UpstreamEvent>`'s reader is one;
 * `bodyEvents` reads a body straight into events, with no stream of events in between (in workerd
 * every JS stream hop costs a crossing into the runtime per event).
 */
export interface EventStreamReader {
  read(): Promise<ReadableStreamReadResult<UpstreamEvent>>;
  /** An event already parsed and not yet read, else undefined (see EventPull.nextNow). */
  readNow?(): UpstreamEvent | undefined;
  /** Stops the attempt's upstream work; a pending read ends as done. */
  cancel(reason?: unknown): Promise<void>;
}

/** A push parser of a body: bytes in, events out through the `emit` it was made with. */
export interface BodyParser {
  push(chunk: Uint8Array): void;
  /** The body ended (a parser reports an unfinished answer as an error event here). */
  end(): void;
}

/**
 * A body read straight into events by a push parser: each read reads the body until at least one
 * event comes out (or the body ends); cancelling it cancels the body, and a read pending then ends as
 * done without the parser's end.
 */
export function bodyEvents(body: ReadableStream<Uint8Array>, parser: (emit: (e: UpstreamEvent) => void) => BodyParser): EventStreamReader {
  const source = body.getReader();
  // Events of the last body chunk not read yet (a chunk may carry several).
  const ready: UpstreamEvent[] = [];
  let next = 0;
  let ended = false;
  const parse = parser((e) => ready.push(e));
  return {
    async read() {
      while (next === ready.length) {
        if (ended) return { done: true, value: undefined };
        ready.length = 0;
        next = 0;
        const r = await source.read();
        // Cancelled while reading: nothing more, not even the parser's end.
        if (ended) return { done: true, value: undefined };
        if (r.done) {
          ended = true;
          parse.end();
        } else {
          parse.push(r.value);
        }
      }
      return { done: false, value: ready[next++]! };
    },
    readNow() {
      return next < ready.length ? ready[next++] : undefined;
    },
    cancel(reason) {
      ended = true;
      ready.length = 0;
      next = 0;
      return source.cancel(reason);
    },
  };
}
