// The stream answer of a generating route: the events as SSE, held until the first event so an
// early failure keeps its HTTP status, with keep-alives, ending in a terminator or an error frame.
import { attemptHeaders, errorResponse } from "../errors/error-envelope.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { ByteQueue } from "./byte-queue.ts";
import type { Deadlines } from "../lib/deadlines.ts";
import { BodyWriter, settle, settleWithin } from "./commit.ts";
import type { EventPull } from "../events/event-source.ts";
import type { AnswerObserver } from "./answer-observer.ts";
import type { UpstreamEvent } from "../events/events.ts";

export interface StreamStart {
  first: UpstreamEvent;
  events: EventPull;
  /** Response headers that are only known once an attempt has started (target, attempts). */
  headers: Record<string, string>;
}

/** Internal events → SSE bytes, in some API's wire format (chat completions, responses, messages). */
export interface SseEncoder {
  /** Appends the SSE frames for one event (maybe none) to `out`. */
  encode(event: UpstreamEvent, out: ByteQueue): void;
  /**
   * Appends what is due once the upstream is done: held final chunks and the terminator (e.g. `data:
   * [DONE]`). It may wait (a stored response is saved before its last frame leaves).
   */
  end(out: ByteQueue): void | Promise<void>;
  /** Set once an error was encoded: nothing more may follow it. */
  readonly failed: boolean;
}

export interface StreamResponseOptions {
  start: Promise<StreamStart>;
  /** Switchyard's own admission of the run (a key's reservation): the grace starts once it is settled, so its refusal keeps its status. */
  admitted?: Promise<unknown>;
  encoder: SseEncoder;
  commitMs: number;
  /** The request's timer (src/lib/deadlines.ts): the commit grace is one of its deadlines. */
  deadlines: Deadlines;
  heartbeatMs: number;
  /** An error response in this API's shape for failures before commit (default: the OpenAI envelope). */
  errorResponse?(error: ProxyError, headers: Record<string, string>): Response;
  /** The client left: stop all upstream work. */
  abort(): void;
  waitUntil(p: Promise<unknown>): void;
  /** Follows the events as they are encoded, and how the delivery ended (the request log). */
  observe?: AnswerObserver;
}

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};

/**
 * The SSE response: held until the first event or the commit grace period, so an early failure keeps
 * its HTTP status; then `data:` frames, `: keep-alive` comments while idle, and either `[DONE]` or
 * one error frame — never a silent end.
 */
export async function sseResponse(opts: StreamResponseOptions): Promise<Response> {
  if (opts.admitted) await opts.admitted.catch(() => {});
  const early = await settleWithin(opts.start, opts.commitMs, opts.deadlines);
  const observe = opts.observe;
  if (early && !early.ok) {
    observe?.end({ error: early.error });
    opts.abort();
    const headers = withAttempts({}, early.error);
    return opts.errorResponse ? opts.errorResponse(early.error, headers) : errorResponse(early.error, headers);
  }
  const headers = early?.ok ? { ...SSE_HEADERS, ...early.value.headers } : SSE_HEADERS;

  const body = new BodyWriter(opts.abort);
  const heartbeat = setInterval(() => body.heartbeat(": keep-alive\n\n", opts.heartbeatMs), opts.heartbeatMs);
  const pump = (async () => {
    try {
      const started = early ?? (await settle(opts.start));
      if (!started.ok) {
        observe?.end({ error: started.error });
        opts.encoder.encode({ type: "error", error: started.error.toInfo() }, body.queue);
        await body.flush();
        return;
      }
      const { first, events } = started.value;
      let event: UpstreamEvent | null = first;
      while (event && !body.clientGone) {
        observe?.event(event);
        opts.encoder.encode(event, body.queue);
        if (opts.encoder.failed) {
          await body.flush();
          break;
        }
        // The events already here join this write; the write goes once none is left.
        const now = events.nextNow?.();
        if (now !== undefined) {
          event = now;
          continue;
        }
        await body.flush();
        try {
          event = await events.next();
        } catch (e) {
          const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", message: String(e) });
          event = { type: "error", error: err.toInfo() };
        }
      }
      if (body.clientGone) {
        observe?.end("client_gone");
        events.cancel();
        return;
      }
      if (opts.encoder.failed) {
        observe?.end("done");
        events.cancel();
        return;
      }
      await opts.encoder.end(body.queue);
      // After the encoder's last frames: the log reads the extension they just did.
      observe?.end("done");
      await body.flush();
    } catch (e) {
      observe?.end({ error: e });
      throw e;
    } finally {
      clearInterval(heartbeat);
      await body.close();
    }
  })();
  opts.waitUntil(pump);
  return new Response(body.readable, { status: 200, headers });
}

/**
 * Headers for an error answered before commit: `x-switchyard-attempts` and `x-switchyard-outcomes`
 * when the error counted them. (Responders build plain records and the Response converts them once;
 * `x-request-id` is added by the app's middleware to every response.)
 */
export function withAttempts(headers: Record<string, string>, err: ProxyError): Record<string, string> {
  const extra = attemptHeaders(err);
  return Object.keys(extra).length ? { ...headers, ...extra } : headers;
}
