// Waiters held for one server's slot, their conversation's home, until a deadline (placement's
// hold: placement/rank-servers.ts holdMs): kept outside the fair line, so that a slot free on another
// server goes to whoever waits for it, and given home's slot first when one frees. This isolate's
// line (admission-queue.ts) and the pool's AdmissionHub (pool-grants.ts) hold alike.

/** Where one waiter is held, and until when. */
export interface Hold {
  server: string;
  until: number;
}

export class HomeHolds<W> {
  private readonly held = new Map<W, Hold>();

  get size(): number {
    return this.held.size;
  }

  add(waiter: W, hold: Hold): void {
    this.held.set(waiter, hold);
  }

  delete(waiter: W): boolean {
    return this.held.delete(waiter);
  }

  waiters(): IterableIterator<W> {
    return this.held.keys();
  }

  /** When the first hold ends (undefined: none held), for the timer that lets it go on. */
  nextEnd(): number | undefined {
    let first: number | undefined;
    for (const h of this.held.values()) if (first === undefined || h.until < first) first = h.until;
    return first;
  }

  /**
   * In the order held: each waiter whose server has a slot for it now is given it (`give` grants it
   * and says whether it could, so the next one sees that slot taken) and taken out; each whose hold
   * is over is taken out and returned, to join the line.
   */
  settle(now: number, give: (waiter: W, server: string) => boolean): W[] {
    const over: W[] = [];
    for (const [waiter, h] of this.held) {
      if (h.until <= now) over.push(waiter);
      else if (!give(waiter, h.server)) continue;
      this.held.delete(waiter);
    }
    return over;
  }
}
