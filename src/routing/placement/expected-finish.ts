// The arithmetic behind placement's estimates: how long a request would wait for a slot on a server,
// and how long it would take there.
import type { InFlight, ServerSpeeds } from "./server-ledger.ts";

/** What is known about one server's load when a request is placed. */
export interface LoadView {
  /** Parallel slots (`/slots` sample; 1 before any sample, so a queue is never assumed away). */
  slots: number;
  /** Switchyard's own requests in flight there, in the order they were placed. */
  inflight: readonly InFlight[];
  /**
   * Busy slots and waiting requests the last `/slots` / `/metrics` sample saw that are not among
   * Switchyard's own in flight then (other isolates', other clients').
   */
  unseen: number;
  /** How long a request there typically takes, for those the sample saw but this isolate did not place. */
  typicalMs: number;
}

/**
 * How long a request placed now would wait for a slot. llama-server serves its slots first come,
 * first served and queues the rest inside (it never refuses when busy), so this replays that queue:
 * the oldest `slots` requests in flight hold the slots for what remains of their estimate, the
 * others follow in order, each holding a slot for its whole estimate. Requests only the sample saw
 * are assumed half done, with the typical length
 * of this isolate's own (or `typicalMs` when it has none there).
 */
export function slotWaitMs(view: LoadView, now: number): number {
  const slots = Math.max(1, view.slots);
  const typical = view.inflight.length ? view.inflight.reduce((s, r) => s + r.expectedMs, 0) / view.inflight.length : view.typicalMs;
  const queue: Array<{ remaining: number; whole: number }> = [
    ...Array.from({ length: view.unseen }, () => ({ remaining: typical / 2, whole: typical })),
    // An estimate already overrun is nearly over, not over: a tenth of it remains.
    ...view.inflight.map((r) => ({ remaining: Math.max(r.expectedMs - (now - r.startedAt), r.expectedMs / 10), whole: r.expectedMs })),
  ];
  if (queue.length < slots) return 0;
  const free = queue.slice(0, slots).map((r) => r.remaining);
  for (const r of queue.slice(slots)) {
    const i = free.indexOf(Math.min(...free));
    free[i] = free[i]! + r.whole;
  }
  return Math.min(...free);
}

/** Milliseconds to prefill `tokens` prompt tokens and generate `generate` tokens at the server's speeds. */
export function serviceMs(tokens: number, generate: number, speeds: ServerSpeeds): number {
  return (tokens / speeds.promptTps + generate / speeds.genTps) * 1000;
}
