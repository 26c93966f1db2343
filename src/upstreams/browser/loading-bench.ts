// Sessions that said a model is not loaded (web-llm's ModelNotLoadedError), kept off that model's
// requests for a while: a tab in that state answers at once, so asking it again in a loop would send it
// every waiting request a few times a second (issue 40, finding 12). Pure bookkeeping, in memory.

/** How long a session is kept off a model after it first says the model is not loaded. */
export const BENCH_FIRST_MS = 1000;
/** Each time it says so again the bench doubles, up to this. */
export const BENCH_MAX_MS = 30_000;

interface Bench {
  /** How many times in a row the session said the model is not loaded. */
  strikes: number;
  /** Until when it gets none of the model's requests. */
  until: number;
}

export class LoadingBench {
  private readonly benches = new Map<string, Bench>();

  /**
   * `sessionId` said `model` is not loaded: it gets none of the model's requests for BENCH_FIRST_MS,
   * doubled for each time it said so since it last served the model. Returns when the bench ends.
   */
  strike(sessionId: string, model: string, now: number): number {
    const key = keyOf(sessionId, model);
    const strikes = (this.benches.get(key)?.strikes ?? 0) + 1;
    const until = now + Math.min(BENCH_FIRST_MS * 2 ** (strikes - 1), BENCH_MAX_MS);
    this.benches.set(key, { strikes, until });
    return until;
  }

  /** When the session's bench for `model` ends; undefined when it is not benched at `now`. */
  until(sessionId: string, model: string, now: number): number | undefined {
    const bench = this.benches.get(keyOf(sessionId, model));
    return bench && bench.until > now ? bench.until : undefined;
  }

  /** The session served the model: it has it loaded, and the next "not loaded" starts the backoff again. */
  served(sessionId: string, model: string): void {
    this.benches.delete(keyOf(sessionId, model));
  }

  /** A session is gone: its benches with it (a page that reconnects announces its models anew). */
  forget(sessionId: string): void {
    for (const key of this.benches.keys()) if (key.startsWith(`${sessionId}\u0000`)) this.benches.delete(key);
  }
}

const keyOf = (sessionId: string, model: string) => `${sessionId}\u0000${model}`;
