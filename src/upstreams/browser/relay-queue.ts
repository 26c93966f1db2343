// Which relayed request runs where, as pure bookkeeping: web-llm runs one generation per model at a
// time on a page (its interrupt is engine-wide), so each session has one running request per model
// and a short queue behind it. The sockets are session-registry.ts's and the streams
// relays-in-flight.ts's; this owns only the order, so it is tested without workerd
// (test/unit/upstreams/browser/relay-queue.test.ts).

/** How many requests may wait per session and model behind the running one before the hub answers 503. */
export const MAX_QUEUE_PER_MODEL = 4;

export interface Queued {
  id: string;
  sessionId: string;
  model: string;
  state: "queued" | "running";
  /** The hash of the request's whole prompt (the last of its prompt chain), when the Worker sent one. */
  prompt?: string;
}

export class RelayQueue<R extends Queued> {
  private readonly relays = new Map<string, R>();
  /**
   * Per session and model, the prompt of the chat request placed there last: web-llm keeps the KV of
   * the conversation it ran last for a model, and reuses it when the next request's messages before
   * the last one are that conversation. Requests run in order, so the last placed is the last to run.
   */
  private readonly lastPrompt = new Map<string, string>();

  get(id: string): R | undefined {
    return this.relays.get(id);
  }

  has(id: string): boolean {
    return this.relays.has(id);
  }

  add(r: R): void {
    this.relays.set(r.id, r);
    const key = `${r.sessionId}\u0000${r.model}`;
    if (r.prompt !== undefined) this.lastPrompt.set(key, r.prompt);
    else this.lastPrompt.delete(key);
  }

  /** A session is gone: forget what its engines held. */
  forget(sessionId: string): void {
    for (const key of this.lastPrompt.keys()) if (key.startsWith(`${sessionId}\u0000`)) this.lastPrompt.delete(key);
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

  /**
   * Where a request for `model` goes among `sessionIds`: the least loaded, unless a session's engine
   * holds the conversation (its last prompt for the model is in the request's `chain`, the prompt's
   * hashes at each message boundary, before the last message) and it would wait behind at most one answer more than the least
   * loaded. Recomputing an agent's long prompt on a laptop GPU takes about as long as an answer, so
   * waiting for one answer at the holder costs no more than moving, and keeps the next turn fast too.
   */
  place(sessionIds: Iterable<string>, model: string, chain?: readonly string[]): { sessionId: string; load: number; holds: boolean } | undefined {
    const ids = [...sessionIds];
    const best = this.leastLoaded(ids, model);
    if (!best || !chain?.length) return best && { ...best, holds: false };
    // web-llm reuses its KV when the messages before the last are the conversation it ran: the
    // request's own whole prompt does not count (the same request again is prefilled anew).
    const held = new Set(chain.slice(0, -1));
    for (const sessionId of ids) {
      const last = this.lastPrompt.get(`${sessionId}\u0000${model}`);
      if (last === undefined || !held.has(last)) continue;
      const load = this.load(sessionId, model);
      if (load <= best.load + 1 && RelayQueue.fits(load)) return { sessionId, load, holds: true };
    }
    return { ...best, holds: sessionHolds(this.lastPrompt.get(`${best.sessionId}\u0000${model}`), held) };
  }

  /** Whether one more request for `model` fits on a session with `load` requests already. */
  static fits(load: number): boolean {
    return load < 1 + MAX_QUEUE_PER_MODEL;
  }
}

const sessionHolds = (last: string | undefined, held: ReadonlySet<string>) => last !== undefined && held.has(last);
