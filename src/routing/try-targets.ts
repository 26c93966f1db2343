import type { Config } from "../config/config.ts";
import type { EnvVars } from "../config/env-vars.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { HealthRecorder } from "../health/health-client.ts";
import { upstreamKey, type HealthSnapshot } from "../health/upstream-health.ts";
import { circuitState } from "../health/circuit-breaker.ts";
import { classifyFailure, retriesSameTarget } from "../health/classify-failure.ts";
import { finalOutcome, targetOutcomes, type TargetFailure } from "./final-outcome.ts";
import { orderTargets } from "./order-targets.ts";
import { retryDelayMs } from "./retry-delay.ts";
import { contextFit, type PromptSize } from "./context-fit.ts";
import { expectedServiceMs, ledger, placementNote } from "./placement/isolate-ledger.ts";
import type { PlacementRequest } from "./placement/rank-servers.ts";
import type { Target } from "./target.ts";
import { QueuePlace, slotReleased } from "./admission/queue-place.ts";
import { learnSlotCounts } from "./admission/slot-counts.ts";
import { getUpstreamRetryAfter, getUpstreamStatus } from "../upstreams/upstream-hints.ts";

export interface TryOptions {
  config: Config;
  env: EnvVars;
  /** The requested model: its `balance` orders the targets. */
  model: string;
  /** What placement reads from the request for `least-busy` (its conversation, prompt prefixes, max_tokens); asked only then. */
  placement?(): PlacementRequest | null;
  /** The prompt's size, for skipping targets whose context cannot hold it; asked only when there is a choice. */
  size?(): PromptSize | null;
  /** Aborted when the client leaves: stops the current attempt and any further ones. */
  signal: AbortSignal;
  /** Called as each attempt starts, so attempts can be reported even on failure. */
  onAttempt?(n: number, target: Target): void;
  /** Where health signals and the outcome are sent after the response (ctx.waitUntil). */
  waitUntil?(p: Promise<unknown>): void;
  /**
   * Whether a failure means the target cannot take this kind of request at all (a browser target with
   * no session for the endpoint): it is skipped, not tried. Not counted (onAttempt has heard of it;
   * the next try reuses its number), no health signal, and its error is the answer only when no
   * target was tried.
   */
  skips?(err: ProxyError, target: Target): boolean;
  /**
   * Wait in the model's admission queue (docs/architecture.md, "Admission queue") when every target
   * is at capacity, taking turns by key (`key`: the request's key id, null without one) and `priority`.
   * Without it the request goes straight to the targets.
   */
  queue?: { key: string | null; priority: number };
}

/** One attempt: resolves with what counts as success, or rejects (a ProxyError) before anything reached the client. */
export type AttemptOne<T> = (target: Target, signal: AbortSignal, startedAt: number) => Promise<T>;

export interface Tried<T> {
  target: Target;
  /** Every try, same-target retries included. */
  attempts: number;
  value: T;
  /** When the request started trying targets, the successful attempt started, and it succeeded. */
  requestStart: number;
  startedAt: number;
  succeededAt: number;
  /** The request's health signals: the caller reports the outcome with `finish` once the answer is over. */
  health: HealthRecorder;
  /** A llama-server's place in the ledger: `end()` once the answer is over; the prompt's characters, when sized. */
  placed?: { server: string; chars: number | undefined; end(at: number): void };
}

/**
 * Tries the targets until one attempt succeeds. Until then nothing has reached the client, so a
 * retryable failure may try the same llama-server again (a 5xx, or no free slot with a short
 * Retry-After: bounded by `retries.perTarget`, with backoff) and then moves on to the next target,
 * within `retries.maxAttempts` in all. A client mistake stops at once. The error thrown is chosen
 * from every target's last failure by one precedence (finalOutcome), whatever the order and the
 * circuits; it carries the attempts and every target's outcome. The order comes from the model's
 * `balance` and the cached health snapshot; every attempt is a passive health signal.
 */
export async function tryTargets<T>(targets: Target[], opts: TryOptions, attemptOne: AttemptOne<T>): Promise<Tried<T>> {
  const { config } = opts;
  const requestStart = Date.now();
  const health = new HealthRecorder(
    opts.env,
    config,
    targets.flatMap((t) => (t.kind === "llama" ? [{ url: t.url, ...(t.apiKeySecret ? { apiKeySecret: t.apiKeySecret } : {}) }] : [])),
    opts.waitUntil,
  );
  const place =
    opts.queue && config.queue.maxWaitMs > 0
      ? new QueuePlace({
          model: opts.model,
          key: opts.queue.key,
          priority: opts.queue.priority,
          plan: targets.map((t) => ({ server: t.kind === "llama" ? upstreamKey(t.url) : null })),
          maxWaitMs: config.queue.maxWaitMs,
          signal: opts.signal,
          snapshot: () => health.snapshot(),
        })
      : undefined;
  // A server whose slot count this isolate does not know yet is taken to have one until it does:
  // read it now (milliseconds) so the next request is gated on the real count; waiters are pumped
  // when it arrives, and a request arriving while it is read waits for it.
  const reading = place ? learnSlotCounts(targets, health.snapshot(), opts.env, () => slotReleased(() => health.snapshot()), (p) => defer(p, opts.waitUntil)) : undefined;
  if (reading) await reading;
  const tries = { attempts: 0, finishTarget: "none" };
  const finish = (err: ProxyError): ProxyError => {
    health.finish({ target: tries.finishTarget, code: err.code, totalMs: Date.now() - requestStart });
    return err;
  };
  let turn: Promise<void> | null | undefined;
  try {
    turn = place?.first();
  } catch (e) {
    throw finish(e as ProxyError);
  }
  // Every target at capacity: wait for another turn while queue.maxWaitMs lasts.
  for (;;) {
    try {
      if (turn) await turn;
    } catch (e) {
      throw finish(e as ProxyError);
    }
    try {
      const tried = await tryOnce(targets, opts, attemptOne, { requestStart, health, place, tries });
      place?.turnEnded();
      return tried;
    } catch (e) {
      place?.turnEnded();
      const err = e as ProxyError;
      // Only a target that is there but full is worth waiting for; none serving the model, or broken, is the answer now.
      if (!place || !err.busy || opts.signal.aborted) throw finish(err);
      try {
        turn = place.again();
      } catch (refused) {
        const r = refused as ProxyError;
        r.attempts = err.attempts;
        if (err.outcomes) r.outcomes = err.outcomes;
        throw finish(r);
      }
    }
  }
}

/** The request's state across its tries: attempts so far, and the target its outcome is reported under. */
interface TryState {
  requestStart: number;
  health: HealthRecorder;
  place: QueuePlace | undefined;
  tries: { attempts: number; finishTarget: string };
}

/** One pass over the targets; the error thrown carries the attempts and every target's outcome. */
async function tryOnce<T>(targets: Target[], opts: TryOptions, attemptOne: AttemptOne<T>, state: TryState): Promise<Tried<T>> {
  const { config } = opts;
  const { requestStart, health, place, tries } = state;
  // One target has no order to choose and no failure to weigh against another: no snapshot needed.
  const snapshot = targets.length > 1 ? health.snapshot() : undefined;
  const now = Date.now();
  const balance = config.models?.[opts.model]?.balance ?? "ordered";
  const placement = balance === "least-busy" ? (opts.placement?.() ?? null) : null;
  const byBalance = snapshot ? orderTargets(targets, { balance, snapshot, now, placement }) : targets;
  const size = snapshot ? (opts.size?.() ?? null) : null;
  const { ordered, tooLong } = size && snapshot ? byContext(byBalance, size, snapshot) : { ordered: byBalance, tooLong: [] };

  // Each target's last failure, in the order first tried.
  const failures = new Map<Target, TargetFailure>();
  const failed = (target: Target, error: ProxyError, skipped = false) =>
    failures.set(target, {
      target: target.name,
      error,
      ...(skipped ? { skipped } : {}),
      ...(circuitOpen(target, snapshot, now) ? { circuitOpen: true } : {}),
      ...(target.kind === "browser" && target.implicit ? { implicit: true } : {}),
    });
  // A target whose context cannot hold the prompt is skipped, with the error it would have answered.
  for (const { target, error } of tooLong) failed(target, error, true);
  let lastTarget: Target | undefined;
  // Attempts count across the request's tries; `retries.maxAttempts` bounds each try.
  let attempts = tries.attempts;
  const firstAttempt = attempts;
  const fail = (err: ProxyError, from?: TargetFailure): ProxyError => {
    tries.attempts = attempts;
    err.attempts = attempts;
    err.outcomes = targetOutcomes([...failures.values()]);
    tries.finishTarget = from && !from.skipped ? from.target : (lastTarget?.name ?? tries.finishTarget);
    return err;
  };

  targets: for (const target of ordered) {
    for (let onTarget = 1; ; onTarget++) {
      if (opts.signal.aborted || attempts - firstAttempt >= config.retries.maxAttempts) break targets;
      const server = target.kind === "llama" ? upstreamKey(target.url) : undefined;
      // A llama-server holding as many of the requests as it has slots would only queue this one
      // inside, where nobody takes turns: it counts as a refusal for capacity, without asking it.
      if (server !== undefined && place && !place.mayStart(server)) {
        failed(target, new ProxyError({ status: 503, code: "no_capacity", retryable: true, busy: true, retryAfter: 1, message: `${target.name} has every slot busy.` }));
        continue targets;
      }
      const before = lastTarget;
      attempts++;
      lastTarget = target;
      opts.onAttempt?.(attempts, target);
      const attempt = new AbortController();
      const onAbort = () => attempt.abort();
      opts.signal.addEventListener("abort", onAbort, { once: true });
      const startedAt = Date.now();
      // Switchyard's own requests in flight on a llama-server are what later placements queue behind,
      // and what the admission queue counts against its slots; each one's end may give a waiter its turn.
      const begun = server !== undefined ? ledger.begin(server, placement?.key ?? null, expectedServiceMs(server, placement, startedAt), startedAt) : undefined;
      const end = begun
        ? (served?: boolean, at?: number) => {
            begun(served, at);
            slotReleased(() => health.snapshot());
          }
        : undefined;
      try {
        const value = await attemptOne(target, attempt.signal, startedAt);
        const succeededAt = Date.now();
        if (target.kind === "llama") health.success(target.url);
        if (server !== undefined && placement) {
          ledger.served(server, placement.prefixes, succeededAt);
          health.placed(placementNote(server, placement, succeededAt));
        }
        // The answer's usage teaches the server's speeds and its tokens per character (the context fit reads it too).
        const chars = placement?.prefixes.at(-1)?.chars ?? size?.chars;
        const placed = server !== undefined && end ? { server, chars, end: (at: number) => end(true, at) } : undefined;
        tries.attempts = attempts;
        return { target, attempts, value, requestStart, startedAt, succeededAt, health, ...(placed ? { placed } : {}) };
      } catch (e) {
        end?.(false, Date.now());
        attempt.abort();
        opts.signal.removeEventListener("abort", onAbort);
        const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${target.name} failed: ${String(e)}` });
        if (opts.skips?.(err, target)) {
          attempts--;
          lastTarget = before;
          failed(target, err, true);
          continue targets;
        }
        const kind = classifyFailure(err, getUpstreamStatus(err));
        if (kind === "gone") break targets;
        const retryAfterMs = getUpstreamRetryAfter(err);
        if (target.kind === "llama") health.failure(target.url, kind, retryAfterMs);
        failed(target, err);
        if (kind === "client") throw fail(err, failures.get(target));
        if (target.kind !== "llama" || !retriesSameTarget(kind) || onTarget >= config.retries.perTarget) continue targets;
        const delay = retryDelayMs(onTarget, retryAfterMs, config.retries);
        if (delay === null) continue targets;
        if (!(await sleep(delay, opts.signal))) break targets;
      }
    }
  }
  if (opts.signal.aborted) throw fail(new ProxyError({ status: 499, code: "client_closed_request", message: "The client closed the request." }));
  const chosen = finalOutcome([...failures.values()]);
  throw fail(chosen?.error ?? new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, message: "No target is available for this model." }), chosen);
}

/**
 * The targets by context fit, keeping their order within each group: those that hold the prompt and
 * max_tokens (or whose window is unknown: browser targets, servers not sampled yet) first, then those
 * that hold only the prompt; those that cannot hold the prompt are left out (docs/reliability.md).
 */
function byContext(targets: Target[], size: PromptSize, snapshot: HealthSnapshot): { ordered: Target[]; tooLong: Array<{ target: Target; error: ProxyError }> } {
  const fits: Target[] = [];
  const promptOnly: Target[] = [];
  const tooLong: Array<{ target: Target; error: ProxyError }> = [];
  for (const t of targets) {
    if (t.kind !== "llama") {
      fits.push(t);
      continue;
    }
    const key = upstreamKey(t.url);
    const f = contextFit(size, ledger.learnedTokensPerChar(key), snapshot.upstreams[key]?.contextWindow);
    if (f.fit === "fits") fits.push(t);
    else if (f.fit === "prompt") promptOnly.push(t);
    else tooLong.push({ target: t, error: f.error });
  }
  return { ordered: [...fits, ...promptOnly], tooLong };
}

/** Whether the target's circuit was open when the request was ordered (orderTargets put it last). */
function circuitOpen(target: Target, snapshot: HealthSnapshot | undefined, now: number): boolean {
  if (target.kind !== "llama" || !snapshot) return false;
  const h = snapshot.upstreams[upstreamKey(target.url)];
  return h !== undefined && circuitState(h.circuit, now) === "open";
}

/** Keeps `p` alive past the response where the runtime allows (ctx.waitUntil); its failure is nobody's. */
function defer(p: Promise<unknown>, waitUntil: TryOptions["waitUntil"]): void {
  p = p.catch(() => {});
  try {
    waitUntil?.(p);
  } catch {}
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
