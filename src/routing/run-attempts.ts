import type { Config } from "../config/config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { HealthRecorder } from "../health/health-client.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";
import type { UpstreamEvent } from "../stream/events.ts";
import type { Upstream } from "../upstreams/upstream.ts";
import { classifyFailure, retriesSameTarget } from "./classify-failure.ts";
import { conversationKey } from "./conversation-key.ts";
import { EventReader } from "./event-reader.ts";
import { orderTargets } from "./order-targets.ts";
import { retryDelayMs } from "./retry-delay.ts";
import type { Target } from "./target.ts";
import { getUpstreamRetryAfter, getUpstreamStatus } from "./upstream-hints.ts";

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
  /** Where health signals and the outcome are sent after the response (ctx.waitUntil). */
  waitUntil?(p: Promise<unknown>): void;
}

/**
 * Tries the targets until one produces its first event. Before that event nothing has reached the
 * client, so a retryable failure may try the same llama-server again (a 5xx, or no free slot with a
 * short Retry-After: bounded by `retries.perTarget`, with backoff) and then moves on to the next
 * target, within `retries.maxAttempts` in all; a client mistake (or the last failure) is thrown as is.
 * The order comes from the model's `balance` and the cached health snapshot; every attempt is a
 * passive health signal, and the request's outcome reaches the health hub once it is over.
 */
export async function runAttempts(targets: Target[], opts: AttemptOptions): Promise<Started> {
  const { config } = opts;
  const requestStart = Date.now();
  const health = new HealthRecorder(
    opts.env,
    config,
    targets.flatMap((t) => (t.kind === "llama" ? [{ url: t.url, ...(t.apiKeySecret ? { apiKeySecret: t.apiKeySecret } : {}) }] : [])),
    opts.waitUntil,
  );
  const ordered =
    targets.length > 1
      ? orderTargets(targets, {
          balance: config.models?.[opts.request.model]?.balance ?? "ordered",
          snapshot: health.snapshot(),
          now: Date.now(),
          key: conversationKey(Array.isArray(opts.request.messages) ? opts.request.messages : []),
        })
      : targets;

  let last: ProxyError | undefined;
  let lastTarget: Target | undefined;
  let attempts = 0;
  const fail = (err: ProxyError): ProxyError => {
    err.attempts = attempts;
    health.finish({ target: lastTarget?.name ?? "none", code: err.code, totalMs: Date.now() - requestStart });
    return err;
  };

  targets: for (const target of ordered) {
    for (let onTarget = 1; ; onTarget++) {
      if (opts.signal.aborted || attempts >= config.retries.maxAttempts) break targets;
      attempts++;
      lastTarget = target;
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
          responseStartMs: config.timeouts.responseStartMs,
          env: opts.env,
        });
        const events = new EventReader(stream.getReader(), target.name, config.timeouts, startedAt);
        const first = await events.next();
        if (!first) throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${target.name} ended its answer without sending anything.` });
        if (first.type === "error") {
          events.cancel();
          throw ProxyError.fromInfo(first.error);
        }
        const firstEventAt = Date.now();
        if (target.kind === "llama") health.success(target.url);
        observeEnd(events, target, health, requestStart, firstEventAt);
        return { target, attempts, first, events, startedAt, firstEventAt };
      } catch (e) {
        attempt.abort();
        opts.signal.removeEventListener("abort", onAbort);
        const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${target.name} failed: ${String(e)}` });
        const kind = classifyFailure(err, getUpstreamStatus(err));
        if (kind === "gone") break targets;
        const retryAfterMs = getUpstreamRetryAfter(err);
        if (target.kind === "llama") health.failure(target.url, kind, retryAfterMs);
        if (kind === "client") throw fail(err);
        // Zero config's implicit browser fallback with no session says less than why the server
        // before it failed; a declared one says how to fix the fallback the operator asked for.
        if (!last || !(target.kind === "browser" && target.implicit && err.code === "no_capacity")) last = err;
        if (target.kind !== "llama" || !retriesSameTarget(kind) || onTarget >= config.retries.perTarget) continue targets;
        const delay = retryDelayMs(onTarget, retryAfterMs, config.retries);
        if (delay === null) continue targets;
        if (!(await sleep(delay, opts.signal))) break targets;
      }
    }
  }
  if (opts.signal.aborted) throw fail(new ProxyError({ status: 499, code: "client_closed_request", message: "The client closed the request." }));
  throw fail(last ?? new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, message: "No target is available for this model." }));
}

/** The outcome is known once the chosen attempt's events end: report it (and mid-stream breaks). */
function observeEnd(events: EventReader, target: Target, health: HealthRecorder, requestStart: number, firstEventAt: number): void {
  let promptTokens: number | undefined;
  let completionTokens: number | undefined;
  events.observer = {
    event(e) {
      if (e.type === "usage") {
        promptTokens = e.usage.promptTokens;
        completionTokens = e.usage.completionTokens;
      }
    },
    end(how) {
      let code = "ok";
      if ("cancelled" in how) code = "client_closed_request";
      else if (!how.ok) {
        code = how.error.code;
        if (how.broken && target.kind === "llama") health.failure(target.url, classifyFailure(how.error));
      }
      health.finish({
        target: target.name,
        code,
        firstEventMs: firstEventAt - requestStart,
        totalMs: Date.now() - requestStart,
        ...(promptTokens !== undefined ? { promptTokens } : {}),
        ...(completionTokens !== undefined ? { completionTokens } : {}),
      });
    },
  };
}

/** Waits `ms` unless the client leaves first (false). */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
