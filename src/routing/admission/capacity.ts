// How full a llama-server is as admission counts it (our requests, the hub's sample, held slots),
// whether a request's plan may start now, and the line's refusal once its wait is over.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { UpstreamHealth } from "../../health/upstream-health.ts";
import type { ServerLedger } from "../placement/server-ledger.ts";

/**
 * A target as admission sees it: a llama-server, by its health key, whose slots Switchyard counts;
 * or `null`, a target whose capacity it cannot see (a browser session: the SessionHub refuses with
 * `503 no_capacity` when its sessions are full).
 */
export interface Seat {
  server: string | null;
  /** On a router (a server that loads models on demand): the model the request needs there. */
  model?: string;
}

/** One llama-server's slots and how many are taken, as far as this isolate can tell. */
export interface ServerLoad {
  /**
   * From the hub's sample (`/slots`, or `/props` where `/slots` is off); before it, the count this
   * isolate read from the server's `/props`; before that, ASSUMED_SLOTS.
   */
  slots: number;
  busy: number;
}

/**
 * The slots taken for a llama-server whose count is not known yet: one. Every server has at least
 * one, so its first request goes at once; a second of ours waits until the count is known (the
 * isolate reads `/props` at the first request, milliseconds) instead of going to a server that may
 * be full and would queue it inside, where nobody takes turns.
 */
export const ASSUMED_SLOTS = 1;

/** Before the hub recorded when it read `/slots`: the sample was gathered within this long of its `checkedAt`. */
export const SAMPLE_SPAN_MS = 1000;

/**
 * Busy = Switchyard's own requests in flight there now (this isolate's ledger) + the others the last
 * sample saw (its busy slots less ours in flight while `/slots` was read, never below 0) + turns
 * given to waiters that have not started yet (`reserved`). Only ours that began or ended during that
 * read's round trip are uncertain; they are taken as seen, so the error is at most those, for one
 * sample. Without a sample only ours count, against `learned` slots (this isolate's `/props` read)
 * or ASSUMED_SLOTS.
 */
export function serverLoad(server: string, health: UpstreamHealth | undefined, ledger: ServerLedger, reserved: number, learned?: number): ServerLoad {
  const own = ledger.inflightCount(server);
  if (health?.slotsTotal === undefined) return { slots: learned ?? ASSUMED_SLOTS, busy: own + reserved };
  const read = health.slotsReadAt ?? { from: health.checkedAt - SAMPLE_SPAN_MS, to: health.checkedAt };
  const others = Math.max(0, (health.slotsBusy ?? 0) - ledger.busyAt(server, read.from, read.to));
  return { slots: health.slotsTotal, busy: own + others + reserved };
}

/**
 * Whether a request with this plan may start now: `free` names the first llama-server (in plan
 * order) with a slot free, to hold for it; `unknown` when none is free but some target's capacity
 * is not visible (a browser session): only trying tells; `full` when every target is a llama-server
 * with every slot taken.
 */
export type Verdict = { kind: "free"; server: string } | { kind: "unknown" } | { kind: "full" };

export function verdictFor(plan: readonly Seat[], load: (server: string) => ServerLoad, hosts: (server: string, model: string) => Hosting = () => PRESENT, waitedMs = 0, keepFree = 0): Verdict {
  let unknown = false;
  // On routers, a seat where the model is loaded (or loading) is what a waiter waits for; one that
  // would load it counts only when there is none, or once the waiter has waited as long as the load
  // would take (a second copy is then worth it). So the slot held for a waiter is where placement
  // will send it, never one another model's waiter needs.
  const ranked = plan.map((seat) => ({ seat, host: seat.server === null || seat.model === undefined ? PRESENT : hosts(seat.server, seat.model) }));
  const present = ranked.filter((r) => r.host.rank === "present");
  const loads = ranked.filter((r) => r.host.rank === "load" && (!present.some((p) => p.seat.server !== null) || waitedMs >= r.host.loadMs));
  for (const { seat } of [...present, ...loads]) {
    if (seat.server === null) {
      unknown = true;
      continue;
    }
    const l = load(seat.server);
    if (l.busy + keptFree(l.slots, keepFree) < l.slots) return { kind: "free", server: seat.server };
  }
  return unknown ? { kind: "unknown" } : { kind: "full" };
}

/**
 * The slots a batch line leaves free on a server of `slots` (batch.keepFreeSlots): `keepFree`, but
 * never every slot, so a one-slot server still runs batch work when nothing else waits.
 */
export function keptFree(slots: number, keepFree: number): number {
  return keepFree <= 0 ? 0 : Math.max(0, Math.min(keepFree, slots - 1));
}

/**
 * What a router can do for a model now: `present` (loaded or loading there, or not a router), `load`
 * (it can load it, in about `loadMs`: room, or an idle model to evict), `no` (every loaded model is in
 * use, or one is loading: a swap now would cut them off).
 */
export interface Hosting {
  rank: "present" | "load" | "no";
  loadMs: number;
}
const PRESENT: Hosting = { rank: "present", loadMs: 0 };

/**
 * `Retry-After` in seconds for a request refused after waiting: the waiters ahead of it and itself,
 * shared among the model's slots, each an expected service; rounded up, at least 1.
 */
export function retryAfterSeconds(ahead: number, slots: number, serviceMs: number): number {
  return Math.max(1, Math.ceil((((ahead + 1) / Math.max(1, slots)) * serviceMs) / 1000));
}

/**
 * The line's refusal once queue.maxWaitMs is over (503 no_capacity with Retry-After): the same for an
 * isolate's own line (queue-place.ts) and the shared one (shared-place.ts).
 */
export function lineRefusal(model: string, waitedMs: number, ahead: number, retryAfter: number): ProxyError {
  const waited = Math.round(waitedMs / 100) / 10;
  return new ProxyError({
    status: 503,
    code: "no_capacity",
    retryable: true,
    retryAfter,
    message: `Every target of ${model} stayed at capacity: this request waited ${waited} s in line (queue.maxWaitMs)${ahead ? ` with ${ahead} ahead of it` : ""}. Retry after ${retryAfter} s.`,
  });
}
