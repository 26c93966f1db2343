// One request's place in its model's admission line (admission-queue.ts): what it may use, what is
// held for it, and whether its turn has come.
import type { Seat } from "./capacity.ts";
import type { Hold } from "./home-holds.ts";

/** One request's place in its model's line. */
export class Ticket {
  /** Set while it may try its targets (given a turn and not put back). */
  granted = false;
  /** Its turn came from the line (it had waited), not at once on arrival. */
  waited = false;
  /** The llama-server a slot is held on for it until its first attempt starts. */
  reserved: string | null = null;
  /** Called when it is given a turn while waiting (maybe during another request's call). */
  onTurn: (() => void) | undefined;
  /**
   * Until `until`, a turn only for a slot on `server`: its conversation's home, which placement
   * judged worth waiting for rather than moving (AdmissionWait.holdFor). Cleared when it is given
   * that turn or the hold is over; it then waits like anyone, first of its key.
   */
  hold: Hold | null = null;
  /** When it first asked for a turn: on routers, a waiter that has waited as long as a load may load its model elsewhere. */
  readonly arrivedAt = Date.now();

  constructor(
    readonly model: string,
    /** Whose turn it takes: the key's id; "" for requests without a key, which share one turn. */
    readonly key: string,
    readonly priority: number,
    /** Where it may go; narrowed when a server turns out unable to take it (its prompt too long there). */
    public plan: readonly Seat[],
    /** Slots it leaves free on a server (a batch line: batch.keepFreeSlots; capacity.ts keptFree). */
    readonly keepFree = 0,
  ) {}

  /**
   * `server` cannot take this request (the prompt does not fit its window): a turn is never given
   * for a slot there. Without it a waiter was given turns on a free server it cannot use, failed its
   * pass at once, and took them again and again outside the line, where the wake-up of the server
   * it can use went to someone else (issue 41).
   */
  exclude(server: string): void {
    if (this.plan.some((s) => s.server === server)) this.plan = this.plan.filter((s) => s.server !== server);
    // Held for a server it cannot use: the hold is over (the line takes it at its next pump).
    if (this.hold?.server === server) this.hold.until = 0;
  }
}
