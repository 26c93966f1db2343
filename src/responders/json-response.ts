// The non-stream answer of a generating route: the events gathered into one JSON body, with
// whitespace heartbeats keeping the connection while a slow answer is made.
import type { AnswerObserver } from "./answer-observer.ts";
import { errorEnvelope, errorResponse } from "../errors/error-envelope.ts";
import { ProxyError, type ErrorInfo } from "../errors/proxy-error.ts";
import type { Deadlines } from "../lib/deadlines.ts";
import { BodyWriter, settle, settleWithin } from "./commit.ts";
import type { StreamStart } from "./sse-response.ts";
import { withAttempts } from "./sse-response.ts";
import type { UpstreamEvent } from "../events/events.ts";

/** Gathers events into one body (chat completion, response, message…). */
export interface Aggregator {
  push(event: UpstreamEvent): void;
  readonly failed: ErrorInfo | null;
}

export interface JsonResponseOptions {
  start: Promise<StreamStart>;
  /** Switchyard's own admission of the run (a key's reservation): the grace starts once it is settled, so its refusal keeps its status. */
  admitted?: Promise<unknown>;
  aggregator: Aggregator;
  /** Builds the final body once the aggregator has everything (it may wait, e.g. to store it first). */
  result(): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** The error body in this API's shape (default: the OpenAI envelope). */
  errorBody?(error: ErrorInfo): unknown;
  /** An error response in this API's shape for failures before commit (default: the OpenAI envelope). */
  errorResponse?(error: ProxyError, headers: Record<string, string>): Response;
  commitMs: number;
  /** The request's timer (src/lib/deadlines.ts): the commit grace is one of its deadlines. */
  deadlines: Deadlines;
  heartbeatMs: number;
  abort(): void;
  waitUntil(p: Promise<unknown>): void;
  /** Follows the events as they are gathered, and how the gathering ended (the request log). */
  observe?: AnswerObserver;
}

/**
 * A non-stream answer, gathered from the upstream's stream. If it is ready within the grace period it
 * is an ordinary JSON response (errors keep their status). Otherwise a 200 is committed and the body
 * starts with whitespace heartbeats — valid leading JSON whitespace that lets the runtime notice a
 * departed client — followed by the completion, or by an error envelope if the upstream failed late.
 * `Content-Encoding: identity` keeps workerd from gzipping (and so hiding) the heartbeats.
 */
export async function jsonResponse(opts: JsonResponseOptions): Promise<Response> {
  let startHeaders: Record<string, string> = {};
  const observe = opts.observe;
  const gather = (async (): Promise<Record<string, unknown>> => {
    let started: StreamStart;
    try {
      started = await opts.start;
    } catch (e) {
      observe?.end({ error: e });
      throw e;
    }
    startHeaders = started.headers;
    let event = started.first;
    try {
      for (;;) {
        observe?.event(event);
        opts.aggregator.push(event);
        if (opts.aggregator.failed) {
          started.events.cancel();
          observe?.end("done");
          throw ProxyError.fromInfo(opts.aggregator.failed);
        }
        const next = started.events.nextNow?.() ?? (await started.events.next());
        if (!next) break;
        event = next;
      }
    } catch (e) {
      observe?.end({ error: e });
      throw e;
    }
    const result = await opts.result();
    // After the body is made: the log reads the extension the body just did.
    observe?.end("done");
    return result;
  })();

  if (opts.admitted) await opts.admitted.catch(() => {});
  const early = await settleWithin(gather, opts.commitMs, opts.deadlines);
  if (early) {
    if (!early.ok) {
      opts.abort();
      const headers = withAttempts(startHeaders, early.error);
      return opts.errorResponse ? opts.errorResponse(early.error, headers) : errorResponse(early.error, headers);
    }
    return new Response(JSON.stringify(early.value), { status: 200, headers: { ...startHeaders, "content-type": "application/json" } });
  }

  const headers = { ...startHeaders, "content-type": "application/json", "content-encoding": "identity", "cache-control": "no-cache" };
  const body = new BodyWriter(opts.abort);
  const heartbeat = setInterval(() => body.heartbeat(" ", opts.heartbeatMs), opts.heartbeatMs);
  void body.write(" ");
  const finish = (async () => {
    try {
      const done = await settle(gather);
      if (body.clientGone) return;
      const failure = (e: ErrorInfo) => (opts.errorBody ? opts.errorBody(e) : errorEnvelope(e));
      await body.write(JSON.stringify(done.ok ? done.value : failure(done.error.toInfo())));
    } finally {
      clearInterval(heartbeat);
      await body.close();
    }
  })();
  opts.waitUntil(finish);
  return new Response(body.readable, { status: 200, headers });
}
