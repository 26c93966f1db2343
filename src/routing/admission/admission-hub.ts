// The Durable Object that coordinates admission across isolates (docs/architecture.md, "Admission
// queue", "Across isolates"): one instance per pool of llama-servers grants starts and learns ends,
// so every isolate's requests count against one set of slots and wait in one fair line. The
// bookkeeping is PoolGrants (pure); this class only carries calls and holds the waiters' replies.
import { DurableObject } from "cloudflare:workers";
import type { Ask, AskReply, Credit, WaitReply } from "./hub-wire.ts";
import { PoolGrants } from "./pool-grants.ts";

/** A grant made to a waiter whose isolate has not collected it within this long is taken back (the isolate is gone). */
const UNCLAIMED_MS = 10_000;
/** The longest one wait call is held (a longer wait calls again). */
const MAX_WAIT_MS = 600_000;

interface Pending {
  resolve(r: WaitReply): void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * In memory only: a restarted object has forgotten the grants in flight, so for as long as those run
 * the servers may hold up to twice their slots (each isolate's requests end normally; their ends are
 * no-ops here). Storage would cost every grant a write on the hot path for a rare event.
 */
export class AdmissionHub extends DurableObject<Env> {
  private readonly grants = new PoolGrants();
  /** Grants made to waiters, not collected by their wait call yet. */
  private readonly granted = new Map<string, { server: string; timer: ReturnType<typeof setTimeout> }>();
  private readonly pending = new Map<string, Pending>();
  /** Set while waiters wait and a credit or a hold is held: the credit's slot goes to them when it lapses unused, a held waiter goes on to any server. */
  private lapseTimer: ReturnType<typeof setTimeout> | undefined;

  /** A slot now, or a place in line; `wait` then collects the grant. `creditsFor`: servers the isolate would like a credit on. */
  ask(ask: Ask, creditsFor: readonly string[] = []): AskReply {
    const now = Date.now();
    const g = this.grants.ask(ask, now);
    this.deliver(this.grants.madeOnLapse());
    if (!g) {
      this.watchCredits();
      return { queued: true, ahead: this.grants.ahead(ask.id) };
    }
    const credits = creditsFor.length ? this.grants.credit(ask, creditsFor, now) : [];
    return credits.length ? { server: g.server, credits } : { server: g.server };
  }

  /**
   * The isolate started `ask` on a credit (PoolGrants.use), and would like another on `creditsFor`:
   * sent after the start, off the request's path.
   */
  use(creditId: string, server: string, ask: Ask, creditsFor: readonly string[] = []): Credit[] {
    const now = Date.now();
    this.grants.use(creditId, server, ask, now);
    this.deliver(this.grants.madeOnLapse());
    return creditsFor.length ? this.grants.credit(ask, creditsFor, now) : [];
  }

  /** A slot on `server` now for a request whose granted attempt `previous` failed (PoolGrants.take), or null. */
  take(ask: Ask, server: string, previous: string | null): { server: string } | null {
    const { grant, made } = this.grants.take(ask, server, previous, Date.now());
    this.deliver([...this.grants.madeOnLapse(), ...made]);
    return grant ? { server: grant.server } : null;
  }

  /** Waits up to `ms` for the grant of an ask that was queued. */
  wait(id: string, ms: number): Promise<WaitReply> | WaitReply {
    const got = this.granted.get(id);
    if (got) {
      clearTimeout(got.timer);
      this.granted.delete(id);
      return { server: got.server };
    }
    if (!this.grants.waiting(id)) return { timedOut: true, ahead: 0 };
    return new Promise<WaitReply>((resolve) => {
      const timer = setTimeout(
        () => {
          this.pending.delete(id);
          const ahead = this.grants.ahead(id);
          this.grants.leave(id);
          resolve({ timedOut: true, ahead });
        },
        Math.max(0, Math.min(ms, MAX_WAIT_MS)),
      );
      this.pending.set(id, { resolve, timer });
    });
  }

  /** The request's answer is over, or its attempt failed, or it did not use its grant: the slot is free. */
  end(id: string): void {
    this.deliver(this.grants.end(id, Date.now()));
  }

  /**
   * The request is gone from the hub's point of view (its client left, or its isolate gave up on the
   * hub and admitted it alone): out of the line, and whatever was granted to it is free again.
   */
  leave(id: string): void {
    const p = this.pending.get(id);
    if (p) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.resolve({ timedOut: true, ahead: 0 });
    }
    const got = this.granted.get(id);
    if (got) {
      clearTimeout(got.timer);
      this.granted.delete(id);
    }
    this.grants.leave(id);
    this.end(id);
  }

  /** What it holds (tests, the status page). */
  stats(): ReturnType<PoolGrants["stats"]> {
    this.deliver(this.grants.expire(Date.now()));
    return this.grants.stats();
  }

  /** How many of every isolate's interactive requests wait for `model` here (the batch runner's check, src/batch/interactive-load.ts). */
  interactiveWaiting(model: string): number {
    this.deliver(this.grants.expire(Date.now()));
    return this.grants.interactiveWaiting(model);
  }

  /** One call that does nothing: the bench's measure of a round trip. */
  ping(): number {
    return Date.now();
  }

  /**
   * While anyone waits, a credit that lapses unused frees its slot for them at that moment, and a
   * hold that ends lets its waiter take any server's slot then, not at the next call that happens to arrive.
   */
  private watchCredits(): void {
    if (this.lapseTimer !== undefined || this.grants.waitingCount === 0) return;
    const lapse = this.grants.nextLapse();
    if (lapse === undefined) return;
    this.lapseTimer = setTimeout(
      () => {
        this.lapseTimer = undefined;
        this.deliver(this.grants.expire(Date.now()));
        this.watchCredits();
      },
      Math.max(0, lapse - Date.now()) + 5,
    );
  }

  private deliver(made: { id: string; server: string }[]): void {
    for (const g of made) {
      const p = this.pending.get(g.id);
      if (p) {
        clearTimeout(p.timer);
        this.pending.delete(g.id);
        p.resolve({ server: g.server });
        continue;
      }
      // Granted between its ask and its wait call: kept for the wait, taken back if it never comes.
      const timer = setTimeout(() => {
        if (this.granted.delete(g.id)) this.end(g.id);
      }, UNCLAIMED_MS);
      this.granted.set(g.id, { server: g.server, timer });
    }
  }
}
