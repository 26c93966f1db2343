// Runs a synchronous stage (a rewriter) over an attempt's events as they are pulled.
import { ProxyError } from "../errors/proxy-error.ts";
import type { EventPull } from "./event-source.ts";
import type { UpstreamEvent } from "./events.ts";

/** A synchronous step over the event stream (a rewriter): events in, the events they make ready out. */
export interface EventStage {
  push(event: UpstreamEvent): UpstreamEvent[];
  /** The events still held once the input has ended. */
  end(): UpstreamEvent[];
}

/**
 * Runs an attempt's events (its first event, then the rest) through `stage` and offers the result as
 * an EventPull again. Timeouts and upstream failures of the inner pull become error events, so the
 * stage sees them in order; after an error the inner pull is cancelled and not read again. The inner
 * pull is read only when the stage has nothing ready, so no event waits anywhere but in the upstream;
 * and no stream sits in between (in workerd each JS stream hop costs a crossing into the runtime per
 * event).
 */
export function pullThrough(first: UpstreamEvent, inner: EventPull, stage: EventStage): EventPull {
  let pending: UpstreamEvent | null = first;
  let ready: UpstreamEvent[] = [];
  let next = 0;
  let done = false;

  const take = (events: UpstreamEvent[]) => {
    ready = events;
    next = 0;
  };
  /** One inner event (null: the inner pull ended) through the stage; an error ends it all. */
  const feed = (event: UpstreamEvent | null) => {
    if (!event) {
      done = true;
      take(stage.end());
      return;
    }
    take(stage.push(event));
    if (event.type === "error") {
      done = true;
      inner.cancel();
    }
  };

  return {
    async next() {
      while (next === ready.length) {
        if (done) return null;
        let event = pending;
        pending = null;
        if (!event) {
          try {
            event = await inner.next();
          } catch (e) {
            const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", message: String(e) });
            event = { type: "error", error: err.toInfo() };
          }
          if (done) return null;
        }
        feed(event);
      }
      return ready[next++]!;
    },
    nextNow() {
      while (next === ready.length) {
        if (done) return undefined;
        const event = pending ?? inner.nextNow?.();
        pending = null;
        if (event === undefined) return undefined;
        feed(event);
      }
      return ready[next++]!;
    },
    cancel() {
      done = true;
      take([]);
      inner.cancel();
    },
  };
}
