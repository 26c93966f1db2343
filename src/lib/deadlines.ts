/** One pending deadline of a request. */
export interface Deadline {
  /** Moves the deadline to `ms` from now (it fires once, whether or not it was moved). */
  reset(ms: number): void;
  cancel(): void;
}

/** The runtime's timer and clock (replaced in tests). */
export interface Clock {
  now(): number;
  setTimeout(fire: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

const RUNTIME: Clock = {
  now: () => Date.now(),
  setTimeout: (fire, ms) => setTimeout(fire, ms),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

interface Entry extends Deadline {
  at: number;
  readonly fire: () => void;
}

/**
 * All of one request's deadlines (commit grace, response start, first token, idle, total) on one
 * runtime timer. In workerd setting and clearing a timer adds a few hundredths of a millisecond to a
 * request; a request that ends before its earliest deadline now sets one timer and clears it once,
 * instead of four.
 *
 * The timer is armed for the earliest deadline. Moving a deadline later does not touch it: when it
 * fires early, the deadlines not yet due are kept and the timer is re-armed for the nearest. It is
 * re-armed at once only for a deadline nearer than the one it is armed for, and cleared when no
 * deadline is left.
 */
export class Deadlines {
  private readonly pending: Entry[] = [];
  private timer: unknown;
  private armedAt = Infinity;
  private horizonAt: number;

  /**
   * @param horizonMs the nearest deadline the request is known to set (its commit grace). The first
   * arming is for that time at the latest, so setting it after a later deadline does not re-arm.
   */
  constructor(
    horizonMs = Infinity,
    private readonly clock: Clock = RUNTIME,
  ) {
    this.horizonAt = clock.now() + horizonMs;
  }

  /** Calls `fire` `ms` from now unless cancelled first. */
  after(ms: number, fire: () => void): Deadline {
    const entry: Entry = {
      at: this.clock.now() + ms,
      fire,
      reset: (next: number) => {
        entry.at = this.clock.now() + next;
        if (entry.at < this.armedAt && this.pending.includes(entry)) this.arm(entry.at);
      },
      cancel: () => this.remove(entry),
    };
    this.pending.push(entry);
    if (entry.at < this.armedAt) this.arm(Math.min(entry.at, Math.max(this.horizonAt, this.clock.now())));
    return entry;
  }

  private remove(entry: Entry): void {
    const i = this.pending.indexOf(entry);
    if (i < 0) return;
    this.pending.splice(i, 1);
    if (this.pending.length === 0) this.disarm();
  }

  private arm(at: number): void {
    // The horizon only shapes the first arming.
    this.horizonAt = Infinity;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = this.clock.setTimeout(this.onTimer, Math.max(0, at - this.clock.now()));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Infinity;
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.armedAt = Infinity;
    const now = this.clock.now();
    const due = this.pending.filter((e) => e.at <= now);
    for (const e of due) this.pending.splice(this.pending.indexOf(e), 1);
    if (this.pending.length) this.arm(Math.min(...this.pending.map((e) => e.at)));
    for (const e of due) e.fire();
  };
}

/**
 * `work`'s outcome, or `late()`'s when `work` has not settled within `ms` (what it returns, or what it
 * throws), on a deadline of the request's timer that is cancelled as soon as either is known.
 */
export async function within<T, L>(work: Promise<T>, ms: number, deadlines: Deadlines, late: () => L): Promise<T | L> {
  let deadline: Deadline | undefined;
  const expired = new Promise<L>((resolve, reject) => {
    deadline = deadlines.after(ms, () => {
      try {
        resolve(late());
      } catch (e) {
        reject(e);
      }
    });
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    deadline?.cancel();
  }
}
