// Which relayed request runs where, as pure bookkeeping: web-llm runs one generation per model at a
// time on a page (its interrupt is engine-wide), so each session has one running request per model
// and a short queue behind it. The SessionHub (session-hub.ts) owns the sockets and the streams; this
// owns only the order, so it is tested without workerd (test/unit/upstreams/browser/relay-queue.test.ts).

/** How many requests may wait per session and model behind the running one before the hub answers 503. */
export const MAX_QUEUE_PER_MODEL = 4;

export interface Queued {
  id: string;
  sessionId: string;
  model: string;
  state: "queued" | "running";
}

export class RelayQueue<R extends Queued> {
  private readonly relays = new Map<string, R>();

  get(id: string): R | undefined {
    return this.relays.get(id);
  }

  has(id: string): boolean {
    return this.relays.has(id);
  }

  add(r: R): void {
    this.relays.set(r.id, r);
  }

  delete(id: string): void {
    this.relays.delete(id);
  }

  all(): R[] {
    return [...this.relays.values()];
  }

  /** Requests of `sessionId` for `model`, running and waiting. */
  load(sessionId: string, model: string): number {
    let n = 0;
    for (const r of this.relays.values()) if (r.sessionId === sessionId && r.model === model) n++;
    return n;
  }

  /** Requests of `sessionId` for `model` waiting behind the running one. */
  waiting(sessionId: string, model: string): number {
    let n = 0;
    for (const r of this.relays.values()) if (r.sessionId === sessionId && r.model === model && r.state === "queued") n++;
    return n;
  }

  /** Running and waiting requests of a session, over all its models. */
  counts(sessionId: string): { running: number; queued: number } {
    let running = 0;
    let queued = 0;
    for (const r of this.relays.values()) {
      if (r.sessionId !== sessionId) continue;
      if (r.state === "running") running++;
      else queued++;
    }
    return { running, queued };
  }

  /**
   * The request to start now on `sessionId` for `model`, marked running: the oldest waiting one, or
   * none while one is already running there.
   */
  startNext(sessionId: string, model: string): R | undefined {
    let next: R | undefined;
    for (const r of this.relays.values()) {
      if (r.sessionId !== sessionId || r.model !== model) continue;
      if (r.state === "running") return undefined;
      next ??= r;
    }
    if (next) next.state = "running";
    return next;
  }

  /** Of `sessionIds`, the one with the fewest requests for `model` (the first of equals). */
  leastLoaded(sessionIds: Iterable<string>, model: string): { sessionId: string; load: number } | undefined {
    let best: { sessionId: string; load: number } | undefined;
    for (const sessionId of sessionIds) {
      const load = this.load(sessionId, model);
      if (!best || load < best.load) best = { sessionId, load };
    }
    return best;
  }

  /** Whether one more request for `model` fits on a session with `load` requests already. */
  static fits(load: number): boolean {
    return load < 1 + MAX_QUEUE_PER_MODEL;
  }
}
