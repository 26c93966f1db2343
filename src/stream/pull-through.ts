import { ProxyError } from "../errors/proxy-error.ts";
import type { EventPull } from "./event-source.ts";
import type { UpstreamEvent } from "./events.ts";

/**
 * Runs an attempt's events (its first event, then the rest) through a TransformStream of events —
 * a rewriter — and offers the result as an EventPull again. Timeouts and upstream failures of the
 * inner pull become error events, so the transform sees them in order.
 *
 * Events are written straight into the transform's writable side (no source stream and no pipe in
 * between); `writer.ready` keeps at most one event waiting there until the reader asks for more.
 */
export function pullThrough(first: UpstreamEvent, inner: EventPull, transform: TransformStream<UpstreamEvent, UpstreamEvent>): EventPull {
  const writer = transform.writable.getWriter();
  const reader = transform.readable.getReader();
  let cancelled = false;
  let pumping = false;

  const pump = async () => {
    let event: UpstreamEvent | null = first;
    try {
      while (event) {
        await writer.ready;
        if (cancelled) return;
        writer.write(event).catch(() => {});
        try {
          event = await inner.next();
        } catch (e) {
          const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", message: String(e) });
          event = null;
          await writer.ready;
          if (cancelled) return;
          writer.write({ type: "error", error: err.toInfo() }).catch(() => {});
        }
      }
      if (!cancelled) await writer.close();
    } catch {
      // The reader was cancelled (the writable errors with it): nothing more to feed.
    }
  };

  return {
    async next() {
      if (!pumping) {
        pumping = true;
        void pump();
      }
      const r = await reader.read();
      return r.done ? null : r.value;
    },
    cancel() {
      cancelled = true;
      inner.cancel();
      reader.cancel().catch(() => {});
    },
  };
}
