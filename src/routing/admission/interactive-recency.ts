// When interactive requests last asked for each model, so a batch line leaves slots free only while
// they come (batch.keepFreeSlots): an isolate's line keeps one (AdmissionQueue), the shared line's
// PoolGrants another. Pure, every time passed in.

/**
 * A batch line leaves slots free only while interactive requests for its model came lately: on a
 * pool idle this long it may take every slot (its throughput is the servers'), and the first
 * interactive request after the lull waits at most for one line to end.
 */
export const INTERACTIVE_RECENT_MS = 10_000;

/** Models remembered: in zero config any model name is a line; stale names go when the map is full. */
const MAX_MODELS = 1024;

export class InteractiveRecency {
  private readonly last = new Map<string, number>();

  /**
   * The slots a request arriving now leaves free: an interactive one (`keepFree` 0) is noted and
   * leaves none; a batch line's `keepFree` holds while an interactive request came within
   * INTERACTIVE_RECENT_MS, else 0.
   */
  keepFree(model: string, keepFree: number, now: number): number {
    if (keepFree <= 0) {
      this.note(model, now);
      return 0;
    }
    const last = this.last.get(model);
    return last !== undefined && now - last < INTERACTIVE_RECENT_MS ? keepFree : 0;
  }

  private note(model: string, now: number): void {
    if (this.last.size >= MAX_MODELS && !this.last.has(model)) for (const [m, t] of this.last) if (now - t >= INTERACTIVE_RECENT_MS) this.last.delete(m);
    if (this.last.size < MAX_MODELS || this.last.has(model)) this.last.set(model, now);
  }
}
