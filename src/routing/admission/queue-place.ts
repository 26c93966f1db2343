// One request's wait in this isolate's admission queue: its turns, its polling timer, and the 503
// with Retry-After when the wait runs out.
import { clientClosed, ProxyError } from "../../errors/proxy-error.ts";
import type { HealthSnapshot } from "../../health/upstream-health.ts";
import type { AdmissionQueue } from "./admission-queue.ts";
import { Ticket } from "./ticket.ts";
import { lineRefusal, type Seat } from "./capacity.ts";
import { KEY_PRIORITY_MAX } from "../../auth/key-record.ts";
import { admissionLevel } from "./service-class.ts";

/**
 * One of our requests on a llama-server ended (or failed to start): its slot may go to a waiter.
 * `snapshot` is the ending request's own (a Worker may not use another request's I/O).
 */
export function slotReleased(queue: AdmissionQueue, snapshot: () => HealthSnapshot): void {
  // Nobody waiting (the usual case): nothing to give, and no snapshot to read.
  if (queue.idle()) return;
  queue.pump(snapshot());
}

/**
 * The turn of an answer being continued on another server (src/routing/continuation/): above every key's
 * `priority` in every class, since its client already holds a committed response mid-answer.
 */
export const CONTINUATION_PRIORITY = admissionLevel("priority", KEY_PRIORITY_MAX + 1);

/** A waiter looks again this often (jittered up to a third more): other isolates' requests end only in the `/slots` sample. */
const POLL_MS = 300;

export interface PlaceOptions {
  /** This isolate's admission queue (src/routing/isolate/isolate-state.ts). */
  queue: AdmissionQueue;
  model: string;
  /** The request's key id; null without a key (those share one turn). */
  key: string | null;
  priority: number;
  plan: readonly Seat[];
  /** Slots it leaves free on each server (a batch line's batch.keepFreeSlots); 0 by default. */
  keepFree?: number;
  maxWaitMs: number;
  /** Aborted when the client leaves: it leaves the line at once. */
  signal: AbortSignal;
  /** The request's own view of upstream health (its HealthRecorder's cached snapshot). */
  snapshot(): HealthSnapshot;
}

/**
 * A request's place in its model's admission queue (docs/architecture.md, "Admission queue"): it
 * waits for a turn, up to `queue.maxWaitMs` from its arrival in all, then is refused with `503
 * no_capacity` and a `Retry-After` from the line. Its own timer looks again every POLL_MS while it
 * waits, so what only the sample shows (other isolates' requests ending) reaches it too.
 */
export class QueuePlace {
  private readonly ticket: Ticket;
  private readonly arrivedAt = Date.now();
  private readonly deadline: number;

  constructor(private readonly opts: PlaceOptions) {
    this.ticket = new Ticket(opts.model, opts.key ?? "", opts.priority, opts.plan, opts.queue.recency.keepFree(opts.model, opts.keepFree ?? 0, this.arrivedAt));
    this.deadline = this.arrivedAt + opts.maxWaitMs;
  }

  /** The first turn: null when it may go at once, else a wait (rejects with 503 no_capacity or 499). */
  first(): Promise<void> | null {
    return this.opts.queue.enter(this.ticket, this.opts.snapshot()) ? null : this.wait();
  }

  /**
   * After a try in which every target was at capacity: another turn, or the 503 once the wait is
   * over (thrown).
   */
  again(): Promise<void> | null {
    const now = Date.now();
    if (now >= this.deadline) throw this.refusal(now);
    return this.opts.queue.requeue(this.ticket, this.opts.snapshot()) ? null : this.wait();
  }

  /** How much of the wait (`queue.maxWaitMs` from arrival) is left, in ms. */
  timeLeft(now = Date.now()): number {
    return Math.max(0, this.deadline - now);
  }

  /** Whether an attempt may start on the llama-server now (see AdmissionQueue.mayStart). */
  mayStart(server: string): boolean {
    // A slot held for this request there was counted free when its turn was given.
    if (this.ticket.reserved === server) {
      this.opts.queue.startedOn(this.ticket);
      return true;
    }
    return this.opts.queue.mayStart(this.ticket, server, this.opts.snapshot());
  }

  /** Until `until` (never past the wait's end), a turn only for a slot on `server` (AdmissionWait.holdFor): whether it is in the plan. */
  hold(server: string, until: number): boolean {
    if (!this.ticket.plan.some((s) => s.server === server)) return false;
    this.ticket.hold = { server, until: Math.min(until, this.deadline) };
    return true;
  }

  /** The llama-server cannot take this request (its prompt does not fit there): no turn is given for its slots. */
  exclude(server: string): void {
    this.ticket.exclude(server);
  }

  /** The try that took this turn is over. */
  turnEnded(): void {
    if (this.ticket.reserved !== null) this.opts.queue.turnEnded(this.ticket, this.opts.snapshot());
  }

  private wait(): Promise<void> {
    const { signal } = this.opts;
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.ticket.onTurn = undefined;
      };
      const onAbort = () => {
        done();
        this.opts.queue.leave(this.ticket, this.opts.snapshot());
        reject(clientClosed());
      };
      const schedule = (now: number) => {
        // A hold's end is looked at when it comes: the other servers' slots count from then.
        const holdLeft = this.ticket.hold ? this.ticket.hold.until - now : Infinity;
        timer = setTimeout(tick, Math.max(0, Math.min(POLL_MS * (1 + Math.random() / 3), this.deadline - now, holdLeft)));
      };
      const tick = () => {
        const now = Date.now();
        if (now >= this.deadline) {
          const err = this.refusal(now);
          done();
          this.opts.queue.leave(this.ticket, this.opts.snapshot());
          reject(err);
          return;
        }
        this.opts.queue.looked(this.ticket.model, this.opts.snapshot, now);
        if (!this.ticket.granted) schedule(now);
      };
      this.ticket.onTurn = () => {
        done();
        resolve();
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      schedule(Date.now());
    });
  }

  private refusal(now: number): ProxyError {
    const ahead = this.opts.queue.ahead(this.ticket);
    return lineRefusal(this.opts.model, now - this.arrivedAt, ahead, this.opts.queue.retryAfter(this.ticket, this.opts.snapshot(), now));
  }

}
