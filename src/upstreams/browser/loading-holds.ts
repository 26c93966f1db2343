// Relayed requests the hub holds for a moment because every session that could take them said the
// model is not loaded (benched, loading-bench.ts): each waits for the earliest bench to end or for a
// session to announce a model (its hello), whichever comes first, instead of the Worker asking again
// and again. Held requests are in memory and keep the hub awake, as any request in flight does.

/** The longest a request is held: a bench ending later is the answer now (503 model_loading + Retry-After). */
export const HOLD_MAX_MS = 2000;

export class LoadingHolds {
  private readonly waiting = new Map<string, () => void>();
  private readonly cancelled = new Set<string>();

  /**
   * Holds request `id` for at most `ms` (capped at HOLD_MAX_MS): true when the time passed or a
   * session announced itself, false when the client left meanwhile (cancel).
   */
  async hold(id: string, ms: number): Promise<boolean> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(wake, Math.min(Math.max(0, ms), HOLD_MAX_MS));
      function wake() {
        clearTimeout(timer);
        resolve();
      }
      this.waiting.set(id, wake);
    });
    this.waiting.delete(id);
    return !this.cancelled.delete(id);
  }

  /** A session announced its models: every held request looks again. */
  announced(): void {
    for (const wake of [...this.waiting.values()]) wake();
  }

  /** The client left: a held request stops waiting (false when `id` is not held). */
  cancel(id: string): boolean {
    const wake = this.waiting.get(id);
    if (!wake) return false;
    this.cancelled.add(id);
    wake();
    return true;
  }
}
