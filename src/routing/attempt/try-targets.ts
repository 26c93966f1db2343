// The attempt loop: a request's targets put in order (placement/order-targets.ts, context-check.ts),
// each gated (a router's pool: placement/pool-gate.ts; a llama-server's slots:
// admission/admission-wait.ts), tried, recorded (attempt-record.ts), then tried again or left for
// the next; a pass that failed everywhere ends with the failure that ranks first (pass-failures.ts),
// or waits in the admission line for another. The caller says what one attempt is (attempt-targets.ts: a chat's first event;
// /v1/embeddings: the whole body).
import { balanceOf, type Config } from "../../config/config.ts";
import type { EnvVars } from "../../config/env-vars.ts";
import { clientClosed, ProxyError } from "../../errors/proxy-error.ts";
import { classifyFailure, retriesSameTarget, type FailureKind } from "../../health/classify-failure.ts";
import { HealthRecorder } from "../../health/health-client.ts";
import type { UpstreamRef } from "../../health/health-report.ts";
import type { NamedTarget as Target, TrackedServer } from "../../upstreams/adapter.ts";
import type { PromptSize } from "../../upstreams/context-fit.ts";
import { capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import { AdmissionWait } from "../admission/admission-wait.ts";
import { isolateState, type IsolateState } from "../isolate/isolate-state.ts";
import type { ServerCounts } from "../placement/context-check.ts";
import { PoolGate, withoutUnlisted } from "../placement/pool-gate.ts";
import type { PoolEstimate } from "../placement/rank-pool.ts";
import type { PlacementRequest } from "../placement/rank-servers.ts";
import { AttemptRecord, type Placed } from "./attempt-record.ts";
import { PassFailures, type Tries } from "./pass-failures.ts";
import { demotedIn, planPass, type PassPlan } from "./plan-pass.ts";
import { retryDelayMs, type RetryPolicy } from "./retry-delay.ts";
import { sleep } from "../../lib/abortable-sleep.ts";

export interface TryOptions {
  config: Config;
  env: EnvVars;
  /** The requested model: its `balance` orders the targets. */
  model: string;
  /** What placement reads from the request for `least-busy` (its conversation, prompt prefixes, max_tokens); asked only then. */
  placement?(): PlacementRequest | null;
  /** The prompt's size, for skipping targets whose context cannot hold it; asked only when there is a choice. */
  size?(): PromptSize | null;
  /** What a server can tell of the prompt's fit: its count, asked only for a prompt near its window, and its window before it is sampled (context-check.ts). */
  serverCounts?: ServerCounts;
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
  queue?: { key: string | null; priority: number; keepFree?: number };
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
  /** A server's place in the ledger: `end()` once the answer is over; the prompt's characters, when sized. */
  placed?: Placed;
}

/**
 * Tries `targets` until `attemptOne` succeeds on one, or throws the request's final error: each pass
 * over the targets (tryOnce) runs `attemptOne` on each in turn, between the admission turns it waits for.
 *
 * Until a success nothing has reached the client, so a retryable failure may try the same server
 * again (a 5xx, or no free slot with a short Retry-After: bounded by `retries.perTarget`, with
 * backoff) and then moves on to the next target, within `retries.maxAttempts` in all. A client
 * mistake stops at once. The error thrown is chosen from every target's last failure by one
 * precedence (finalOutcome), whatever the order and the circuits; it carries the attempts and every
 * target's outcome. The order comes from the model's `balance` and the cached health snapshot; every
 * attempt is a passive health signal.
 */
export async function tryTargets<T>(planned: Target[], opts: TryOptions, attemptOne: AttemptOne<T>): Promise<Tried<T>> {
  const { config } = opts;
  const requestStart = Date.now();
  const isolate = isolateState();
  // Routers (servers that load models on demand) are read before the first placement on them: what
  // they list and have loaded decides where the request goes (placement/pool-reads.ts).
  const discovering = isolate.poolReads.discover(planned, opts.env, (p) => defer(p, opts.waitUntil));
  if (discovering) await discovering;
  const targets = withoutUnlisted(isolate.pool, planned, opts.model);
  // A load decided on an old copy of the routers evicts what another isolate just loaded (pool-reads.ts).
  const routersRead = isolate.poolReads.beforeLoad(targets, opts.model, opts.env, (p) => defer(p, opts.waitUntil));
  if (routersRead) await routersRead;
  const health = new HealthRecorder(opts.env, config, targets.flatMap((t) => (capabilitiesOf(t).server ? [serverRef(capabilitiesOf(t).server!)] : [])), opts.waitUntil);
  const admission =
    opts.queue && config.queue.maxWaitMs > 0
      ? new AdmissionWait(targets, {
          state: isolate, model: opts.model, ...opts.queue, maxWaitMs: config.queue.maxWaitMs, signal: opts.signal, env: opts.env,
          snapshot: () => health.snapshot(), defer: (p) => defer(p, opts.waitUntil), shared: config.queue.shared,
          conversation: () => opts.placement?.()?.key ?? null, ordered: balanceOf(config, opts.model) === "ordered",
        })
      : undefined;
  // A slot count this isolate does not know yet is read first; a read under way is waited for.
  const reading = admission?.slotCounts();
  if (reading) await reading;
  const tries: Tries = { attempts: 0, finishTarget: "none", wait: null };
  const finish = (err: ProxyError): ProxyError => {
    health.finish({ target: tries.finishTarget, code: err.code, totalMs: Date.now() - requestStart });
    return err;
  };
  // Every target at capacity: wait for another turn while queue.maxWaitMs lasts.
  const state: TryState = { isolate, requestStart, health, admission, tries };
  for (;;) {
    // The shared line grants by the pass's order, so that is known before the turn; this isolate's
    // own line orders the pass after it (what it knows then is newer).
    let plan: PassPlan | undefined;
    if (admission?.shared) {
      plan = await planPass(targets, opts, isolate, health);
      for (const { target } of plan.tooLong) admission.exclude(target);
      admission.prefer(plan.ordered, demotedIn(plan), plan.hold);
    }
    try {
      const turn = admission?.turn();
      if (turn) await turn;
    } catch (e) {
      throw finish(e as ProxyError);
    }
    try {
      const tried = await tryOnce(targets, opts, state, attemptOne, plan);
      admission?.passEnded();
      return tried;
    } catch (e) {
      admission?.passEnded();
      const err = e as ProxyError;
      // Worth waiting for: a target that is there but full (whatever error the precedence chose to
      // answer with: a server still loading ranks first, and must not send away a request a busy
      // one will take), or, with every target down, one loading its model. None serving the model,
      // or refusing the request, is the answer now.
      if (!admission || tries.wait === null || opts.signal.aborted) throw finish(err);
      const next = admission.afterPass(err, tries.wait);
      if (next instanceof ProxyError) throw finish(next);
      if (next !== null && !(await sleep(next, opts.signal))) throw finish(clientClosed());
    }
  }
}

/** What every pass of the request shares. */
interface TryState {
  /** This isolate's ledger, pool and line (src/routing/isolate/isolate-state.ts). */
  isolate: IsolateState;
  requestStart: number;
  health: HealthRecorder;
  admission: AdmissionWait | undefined;
  tries: Tries;
}

/** One pass: the targets put in order (planPass, unless ordered before the turn), then tried in it (tryInOrder); the error thrown carries the attempts and every target's outcome. */
async function tryOnce<T>(targets: Target[], opts: TryOptions, state: TryState, attemptOne: AttemptOne<T>, planned?: PassPlan): Promise<Tried<T>> {
  const { config } = opts;
  const { isolate, requestStart, health, admission, tries } = state;
  const { snapshot, now, placement, estimates, size, ordered, tooLong, hold } = planned ?? (await planPass(targets, opts, isolate, health));
  const pools = new PoolGate(isolate.pool, targets, opts.model, now, requestStart);
  const pass = new PassFailures(tries, snapshot, now, health, config.retries.maxRetryAfterMs);
  // A target whose context cannot hold the prompt is skipped, with the error it would have answered;
  // the admission line gives this request no turn for its slots any more.
  for (const { target, error } of tooLong) {
    pass.failed(target, error, { skipped: true });
    admission?.exclude(target);
  }
  return tryInOrder(ordered, opts, { ...state, pass, pools, estimates, placement, size, hold }, attemptOne);
}

/** A pass's order and what it learns as it goes. */
interface PassState extends TryState {
  pass: PassFailures;
  pools: PoolGate;
  /** Each router's estimate from the order (placement/rank-pool.ts). */
  estimates: Map<Target, PoolEstimate>;
  placement: PlacementRequest | null;
  size: PromptSize | null;
  hold: PassPlan["hold"];
}

/**
 * The targets in order, each gated (a router's pool, a llama-server's slots), tried, recorded, and
 * then tried again (a retryable failure, within `retries.perTarget`, after a backoff) or left for
 * the next; a client mistake stops at once.
 */
async function tryInOrder<T>(ordered: Target[], opts: TryOptions, state: PassState, attemptOne: AttemptOne<T>): Promise<Tried<T>> {
  const { config } = opts;
  const { requestStart, health, admission, tries, pass, pools, estimates, placement, size, hold } = state;
  // A target refused for capacity in this pass: a standby load (placement/rank-pool.ts) waits for it.
  let sawBusy = false;
  targets: for (const target of ordered) {
    for (let onTarget = 1; ; onTarget++) {
      if (opts.signal.aborted || pass.made >= config.retries.maxAttempts) break targets;
      // A router's refusal (placement/pool-gate.ts) stands for an attempt: a model that failed to load
      // there lately is the answer when nothing serves it; busy, the request waits in line.
      const gate = pools.check(target, estimates.get(target), sawBusy);
      if ("refused" in gate) {
        pass.failed(target, gate.refused, gate.refused.busy ? {} : { kind: "client" });
        if (gate.refused.busy) sawBusy = true;
        continue targets;
      }
      // A llama-server whose slots are all taken (admission/admission-wait.ts) refuses for capacity, unasked.
      // Awaited only when the shared line asks its hub: a microtask here would let another request
      // rank the servers before this attempt's place in the ledger is taken (placement.test.ts).
      const refusal = admission?.refuses(target);
      const full = refusal instanceof Promise ? await refusal : refusal;
      if (full) {
        sawBusy = true;
        pass.failed(target, full);
        // Placement kept the conversation home, its wait for a slot counted: it waits in line for
        // that slot (once, within the budget) rather than recompute its prompt on the next target.
        if (hold?.target === target && admission!.holdFor(target, hold.until)) break targets;
        continue targets;
      }
      const undo = pass.begin(target);
      opts.onAttempt?.(pass.attempts, target);
      const attempt = new AbortController();
      const onAbort = () => attempt.abort();
      opts.signal.addEventListener("abort", onAbort, { once: true });
      const startedAt = Date.now();
      // Its place in the ledger and the pool, and its health signals (attempt-record.ts).
      const record = new AttemptRecord(target, gate.entry, { health, placement, env: opts.env, defer: (p) => defer(p, opts.waitUntil), ended: (served) => admission?.attemptEnded(served) }, startedAt);
      try {
        const value = await attemptOne(target, attempt.signal, startedAt);
        const succeededAt = Date.now();
        const placed = record.succeeded(succeededAt, size);
        tries.attempts = pass.attempts;
        return { target, attempts: pass.attempts, value, requestStart, startedAt, succeededAt, health, ...(placed ? { placed } : {}) };
      } catch (e) {
        const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${target.name} failed: ${String(e)}` });
        record.failed(err);
        attempt.abort();
        opts.signal.removeEventListener("abort", onAbort);
        if (opts.skips?.(err, target)) {
          undo();
          pass.failed(target, err, { skipped: true });
          continue targets;
        }
        const kind = classifyFailure(err, err.upstreamStatus);
        if (kind === "gone") break targets;
        const retryAfterMs = err.upstreamRetryAfterMs;
        record.unhealthy(kind, retryAfterMs);
        pass.failed(target, err, { kind });
        if (kind === "client") throw pass.end(err, target);
        const delay = sameTargetDelay(target, kind, onTarget, retryAfterMs, config.retries);
        if (delay === null) continue targets;
        if (!(await sleep(delay, opts.signal))) break targets;
      }
    }
  }
  throw opts.signal.aborted ? pass.end(clientClosed()) : pass.final();
}

/** How long to wait before trying `target` again after its `retry`-th failure of `kind` (retry-delay.ts), or null to move on. */
function sameTargetDelay(target: Target, kind: FailureKind, retry: number, retryAfterMs: number | undefined, policy: RetryPolicy): number | null {
  if (!capabilitiesOf(target).retriesSameTarget || !retriesSameTarget(kind) || retry >= policy.perTarget) return null;
  return retryDelayMs(retry, retryAfterMs, policy);
}

/** Keeps `p` alive past the response where the runtime allows (ctx.waitUntil); its failure is nobody's. */
function defer(p: Promise<unknown>, waitUntil: TryOptions["waitUntil"]): void {
  p = p.catch(() => {});
  try {
    waitUntil?.(p);
  } catch {}
}

/** What the health hub needs of a tracked server. */
function serverRef(server: TrackedServer): UpstreamRef {
  return {
    url: server.url,
    ...(server.apiKeySecret ? { apiKeySecret: server.apiKeySecret } : {}),
    ...(server.probe !== "llama" ? { probe: server.probe } : {}),
    ...(server.headers ? { headers: server.headers } : {}),
  };
}
