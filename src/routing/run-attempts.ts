import type { Config } from "../config/config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";
import type { UpstreamEvent } from "../stream/events.ts";
import type { Upstream } from "../upstreams/upstream.ts";
import { EventReader } from "./event-reader.ts";
import type { Target } from "./target.ts";

export interface Started {
  target: Target;
  attempts: number;
  first: UpstreamEvent;
  events: EventReader;
  startedAt: number;
  firstEventAt: number;
}

export interface AttemptOptions {
  request: ChatRequest;
  requestId: string;
  config: Config;
  env: Record<string, unknown>;
  /** Aborted when the client leaves: stops the current attempt and any further ones. */
  signal: AbortSignal;
  upstreamFor(target: Target): Upstream;
  /** Called as each attempt starts, so attempts can be reported even on failure. */
  onAttempt?(n: number, target: Target): void;
}

/**
 * Tries the targets in order until one produces its first event. Before that event nothing has
 * reached the client, so a retryable failure moves on to the next target; a client mistake (or the
 * last failure) is thrown as is.
 */
export async function runAttempts(targets: Target[], opts: AttemptOptions): Promise<Started> {
  let last: ProxyError | undefined;
  let attempts = 0;
  for (const target of targets) {
    if (opts.signal.aborted) break;
    attempts++;
    opts.onAttempt?.(attempts, target);
    const attempt = new AbortController();
    const onAbort = () => attempt.abort();
    opts.signal.addEventListener("abort", onAbort, { once: true });
    const startedAt = Date.now();
    try {
      const upstream = opts.upstreamFor(target);
      const stream = await upstream.open(opts.request, {
        requestId: opts.requestId,
        signal: attempt.signal,
        responseStartMs: opts.config.timeouts.responseStartMs,
        env: opts.env,
      });
      const events = new EventReader(stream.getReader(), target.name, opts.config.timeouts, startedAt);
      const first = await events.next();
      if (!first) throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${target.name} ended its answer without sending anything.` });
      if (first.type === "error") {
        events.cancel();
        throw ProxyError.fromInfo(first.error);
      }
      return { target, attempts, first, events, startedAt, firstEventAt: Date.now() };
    } catch (e) {
      attempt.abort();
      opts.signal.removeEventListener("abort", onAbort);
      const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${target.name} failed: ${String(e)}` });
      if (!err.retryable) throw withAttempts(err, attempts);
      last = err;
    }
  }
  if (opts.signal.aborted) throw new ProxyError({ status: 499, code: "client_closed_request", message: "The client closed the request." });
  throw withAttempts(last ?? new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, message: "No target is available for this model." }), attempts);
}

function withAttempts(err: ProxyError, attempts: number): ProxyError {
  err.attempts = attempts;
  return err;
}
