import { ProxyError } from "../errors/proxy-error.ts";
import type { EventPull } from "./event-source.ts";
import type { UpstreamEvent } from "./events.ts";

/**
 * Runs an attempt's events (its first event, then the rest) through a TransformStream of events —
 * a rewriter — and offers the result as an EventPull again. Timeouts and upstream failures of the
 * inner pull become error events, so the transform sees them in order.
 */
export function pullThrough(first: UpstreamEvent, inner: EventPull, transform: TransformStream<UpstreamEvent, UpstreamEvent>): EventPull {
  let pending: UpstreamEvent | null = first;
  const source = new ReadableStream<UpstreamEvent>(
    {
      async pull(controller) {
        if (pending) {
          controller.enqueue(pending);
          pending = null;
          return;
        }
        try {
          const event = await inner.next();
          if (event) controller.enqueue(event);
          else controller.close();
        } catch (e) {
          const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", message: String(e) });
          controller.enqueue({ type: "error", error: err.toInfo() });
          controller.close();
        }
      },
      cancel() {
        inner.cancel();
      },
    },
    { highWaterMark: 0 },
  );
  const reader = source.pipeThrough(transform).getReader();
  return {
    async next() {
      const r = await reader.read();
      return r.done ? null : r.value;
    },
    cancel() {
      reader.cancel().catch(() => {});
    },
  };
}
