// A request's wait for its turns in its model's admission line, around its passes over the targets
// (docs/architecture.md, "Admission queue"): its place in the line, the gate on each llama-server's
// slots during a pass, and after a pass that failed, whether it waits for another turn, looks again
// shortly for a server coming back, or is answered.
import type { EnvVars } from "../../config/env-vars.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import type { HealthSnapshot } from "../../health/upstream-health.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";
import { capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import type { ModelPool } from "../placement/model-pool.ts";
import type { ServerLedger } from "../placement/server-ledger.ts";
import { pooledModel } from "../placement/pool-gate.ts";
import type { AdmissionQueue } from "./admission-queue.ts";
import type { Seat } from "./capacity.ts";
import type { CreditStock } from "./credit-stock.ts";
import { QueuePlace, slotReleased } from "./queue-place.ts";
import { sharesAdmission, type SharedCounts } from "./hub-client.ts";
import { SharedPlace } from "./shared-place.ts";
import type { SlotCounts } from "./slot-counts.ts";

/** How long a request waiting for a server to come back waits between looks (jittered up to a third more). */
const COMEBACK_MS = 250;

/**
 * What of this isolate's state (src/routing/isolate/isolate-state.ts) a wait uses: its line, the slot
 * counts it read, its routers' models, its placement ledger (where its conversations live), and
 * through the shared line, the tally of its admissions and the credits the hubs gave it.
 */
export interface AdmissionState {
  queue: AdmissionQueue;
  slots: SlotCounts;
  pool: ModelPool;
  ledger: Pick<ServerLedger, "homeOf">;
  sharedCounts: SharedCounts;
  credits: CreditStock;
}

export interface WaitOptions {
  state: AdmissionState;
  /** The requested model: its line. */
  model: string;
  /** The request's key id (null without one) and its priority: whose turn it takes. */
  key: string | null;
  priority: number;
  /** Slots it leaves free on each server (a batch line: batch.keepFreeSlots). */
  keepFree?: number;
  /** `queue.maxWaitMs`: from its arrival, the longest it waits in line. */
  maxWaitMs: number;
  /** Aborted when the client leaves: it leaves the line at once. */
  signal: AbortSignal;
  env: EnvVars;
  /** The request's own view of upstream health (its HealthRecorder's cached snapshot). */
  snapshot(): HealthSnapshot;
  /** Keeps a background read alive past the response (ctx.waitUntil). */
  defer(p: Promise<unknown>): void;
  /** `queue.shared`: the line is the pool's AdmissionHub's, shared by every isolate (shared-place.ts), where the plan allows. */
  shared?: boolean;
  /** The request's conversation (placement's key), for the shared line's choice of server. */
  conversation?(): string | null;
  /** The model's `balance` is "ordered" (the shared line grants the first server with a slot free). */
  ordered?: boolean;
}

/** What a failed pass is worth waiting for (routing/attempt/worth-waiting.ts): a target that was full, or one coming back. */
export type WorthWaiting = "capacity" | "comeback";

/**
 * A request's wait in its model's line: `turn()` before each pass over the targets, `refuses` and
 * `exclude` during it, `passEnded()` after it, and `afterPass` when it failed.
 */
export class AdmissionWait {
  private readonly place: QueuePlace | SharedPlace;
  /** The turn the next pass waits for: the first turn before the first pass; null when it may go at once. */
  private next: Promise<void> | null | "first" = "first";
  /** Turns given at once, in a row, after passes that failed. */
  private spins = 0;
  /** The request has been held in line for its conversation's home once (holdFor). */
  private held = false;

  constructor(
    private readonly targets: readonly Target[],
    private readonly opts: WaitOptions,
  ) {
    const { state } = opts;
    const plan = admissionPlan(targets, opts.model, state.pool);
    const place = { queue: state.queue, model: opts.model, key: opts.key, priority: opts.priority, ...(opts.keepFree ? { keepFree: opts.keepFree } : {}), plan, maxWaitMs: opts.maxWaitMs, signal: opts.signal, snapshot: opts.snapshot };
    const servers = sharedServers(plan);
    this.place =
      sharesAdmission(opts.env, opts.shared ?? false) && servers
        ? new SharedPlace({
            ...place,
            env: opts.env,
            servers,
            slots: (s) => opts.snapshot().upstreams[s]?.slotsTotal ?? state.slots.learned(s),
            counts: state.sharedCounts,
            credits: state.credits,
            conversation: () => opts.conversation?.() ?? null,
            // A model balanced "ordered" goes to the first server with a slot free, as the hub would
            // grant. Otherwise a conversation this isolate has not placed (or heard of) may live on any
            // server: the hub, which counts every isolate's grants, knows where; a credit is only for
            // one known to be there.
            creditFits: (server) => {
              if (opts.ordered ?? true) return true;
              const key = opts.conversation?.() ?? null;
              return key === null || state.ledger.homeOf(key, Date.now()) === server;
            },
            ordered: opts.ordered ?? true,
            defer: opts.defer,
          })
        : new QueuePlace(place);
  }

  /**
   * A server whose slot count this isolate does not know yet is taken to have one until it does:
   * its count is read now (milliseconds) so the next request is gated on the real count; waiters are
   * pumped when it arrives, and a request arriving while it is read waits for it (the promise).
   */
  slotCounts(): Promise<void> | undefined {
    const { queue, slots } = this.opts.state;
    return slots.learnAll(this.targets, this.opts.snapshot(), this.opts.env, () => slotReleased(queue, this.opts.snapshot), this.opts.defer);
  }

  /** The turn the next pass waits for: rejects with 503 no_capacity when the wait runs out, 499 when the client leaves; null: it goes now. */
  turn(): Promise<void> | null {
    const turn = this.next === "first" ? this.place.first() : this.next;
    this.next = null;
    return turn;
  }

  /**
   * A server holding as many of the requests as it has slots would only queue this one inside,
   * where nobody takes turns: `target`'s refusal for capacity, without asking it (undefined: it may
   * start there, and a slot held for this request there is its own from now on).
   */
  refuses(target: Target): ProxyError | undefined | Promise<ProxyError | undefined> {
    const gated = gatedServer(target);
    if (gated === undefined) return undefined;
    const may = this.place.mayStart(gated);
    if (may === true) return undefined;
    if (may === false) return busy(target);
    return may.then((ok) => (ok ? undefined : busy(target)));
  }

  /** Whether the line is the pool's AdmissionHub's: it grants by the pass's order (prefer), so the pass is ordered before its turn. */
  get shared(): boolean {
    return this.place instanceof SharedPlace;
  }

  /**
   * The order the next pass tries its targets in, those placement put back, and the conversation's
   * home it would wait for (plan-pass.ts `hold`, once a request): the shared line grants by them.
   */
  prefer(ordered: readonly Target[], demoted: readonly Target[], hold?: { target: Target; until: number } | null): void {
    if (!(this.place instanceof SharedPlace)) return;
    const servers = (list: readonly Target[]) => list.flatMap((t) => gatedServer(t) ?? []);
    const home = hold && !this.held ? gatedServer(hold.target) : undefined;
    if (home !== undefined) this.held = true;
    this.place.prefer(servers(ordered), servers(demoted), home !== undefined ? { server: home, until: hold!.until } : undefined);
  }

  /**
   * `target`, full, is the conversation's home, worth waiting for until `until` rather than moving
   * (placement/rank-servers.ts holdMs): the line gives this request a turn only for a slot there
   * until then, and the pass stops. Whether it holds: once a request, in this isolate's line (the
   * shared line's hub is told of the hold with the ask, before the pass: prefer).
   */
  holdFor(target: Target, until: number): boolean {
    const gated = gatedServer(target);
    if (this.held || gated === undefined || !(this.place instanceof QueuePlace) || until <= Date.now()) return false;
    this.held = true;
    return this.place.hold(gated, until);
  }

  /** `target` cannot take this request (its prompt does not fit there): the line gives it no turn for its slots any more. */
  exclude(target: Target): void {
    const gated = gatedServer(target);
    if (gated !== undefined) this.place.exclude(gated);
  }

  /** An attempt that `refuses` let start ended (its answer is over: `served`; or it failed): the shared line frees its slot. */
  attemptEnded(served: boolean): void {
    if (this.place instanceof SharedPlace) this.place.attemptEnded(served);
  }

  /** The pass that took the turn is over. */
  passEnded(): void {
    this.place.turnEnded();
  }

  /**
   * After a pass that failed with `err`, worth waiting for (`worth`): the error to answer with (the
   * line's 503 once the wait is over, carrying the pass's attempts and outcomes), or how long to
   * pause before the next pass (ms), or null: the next pass goes when `turn()` says.
   */
  afterPass(err: ProxyError, worth: WorthWaiting): ProxyError | number | null {
    if (worth === "comeback") {
      // Nothing to take turns on while every server is down: look again shortly, the last time
      // when the wait runs out; then the failure that ranks first is the answer.
      const left = this.place.timeLeft();
      if (left <= 0) return err;
      // The shared line's grant ended with the pass: the next pass asks the hub again.
      if (this.place instanceof SharedPlace) this.next = "first";
      return Math.min(left, COMEBACK_MS * (1 + Math.random() / 3));
    }
    try {
      this.next = this.place.again();
    } catch (refused) {
      const r = refused as ProxyError;
      r.attempts = err.attempts;
      if (err.outcomes) r.outcomes = err.outcomes;
      return r;
    }
    // Given a turn at once after a pass that failed (a busy target the line cannot see, such as a
    // browser session's queue): from the second time on, the next pass waits a moment, or it would spin.
    if (this.next !== null) this.spins = 0;
    else if (++this.spins > 1) return COMEBACK_MS * (1 + Math.random() / 3);
    return null;
  }
}

const busy = (target: Target) => new ProxyError({ status: 503, code: "no_capacity", retryable: true, busy: true, retryAfter: 1, message: `${target.name} has every slot busy.` });

/** The seats of a model's targets in its line: each gated on its llama-server when that reports its slots, with the model a router pools. */
export function admissionPlan(targets: readonly Target[], model: string, pool: ModelPool): Seat[] {
  return targets.map((t) => {
    const server = gatedServer(t) ?? null;
    const pooled = server !== null ? pooledModel(pool, t, model) : undefined;
    return pooled !== undefined ? { server, model: pooled } : { server };
  });
}

/**
 * The servers whose AdmissionHub admits a plan, or null when only an isolate's line can: shared
 * across isolates when every target is a llama-server that reports its slots and loads no models on
 * demand (routers and browser sessions keep this isolate's line).
 */
export function sharedServers(plan: readonly Seat[]): string[] | null {
  const servers = plan.flatMap((s) => (s.server !== null && !("model" in s) ? [s.server] : []));
  return servers.length > 0 && servers.length === plan.length ? servers : null;
}

/** The server the admission queue gates `target` on: one that reports its slots (undefined otherwise). */
function gatedServer(target: Target): string | undefined {
  const server = capabilitiesOf(target).server;
  return server?.reportsSlots ? server.key : undefined;
}
