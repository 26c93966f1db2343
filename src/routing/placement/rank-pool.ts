// Placement among llama-server routers by which model each has loaded: where a request for a model
// would finish first, counting a load (and what an eviction costs the evicted model) as part of it.
import type { ModelView } from "./model-pool.ts";

/** A router placement may choose for the request's model. */
export interface PoolChoice {
  id: string;
  view: ModelView;
  /** The wait for a slot there (slotWaitMs over the requests in flight) and the request's service once it has one. */
  waitMs: number;
  serviceMs: number;
  /** Deterministic tie-break (the key's rendezvous score): every isolate agrees. */
  tieBreak: number;
}

export interface PoolEstimate {
  id: string;
  /** When the request would finish there, ms from now (Infinity where it failed to load). */
  finishMs: number;
  /** The model is not there: the request would load it. */
  loads: boolean;
  /** Loading it now would evict a model with requests in flight, or swap during a load: it must wait. */
  blocked: boolean;
  failed: boolean;
  /**
   * A load that is only worth it when the better placements fail outright: a request refused there
   * for capacity waits in line for them instead (a turn waits for the server holding its model
   * rather than loading a second copy, unless that wait is longer than the load).
   */
  standby: boolean;
}

/** A model evicted after this long unused costs nothing to evict: nobody is waiting for it. */
export const RECENT_MS = 10 * 60_000;
const SAME_MS = 25;
const SAME_SHARE = 0.05;
const same = (a: number, b: number) => Math.abs(a - b) <= Math.max(SAME_MS, SAME_SHARE * Math.min(a, b));

/**
 * What the request costs on one router:
 * - the model loaded there: the wait for a slot, then its service;
 * - loading there: what remains of the load (at least a tenth of it), then the wait and service;
 * - not there, with room: the load, then the service;
 * - not there, evicting the router's least recently used idle model: the same, plus that model's own
 *   load time when it was used within RECENT_MS and is loaded nowhere else (someone will want it back),
 *   and this model's again when this is a second copy (`secondCopy`: getting that one back evicts it);
 * - not there and every loaded model busy (or one loading): blocked, until they drain.
 */
export function estimateOn(c: PoolChoice, now: number, secondCopy = false): PoolEstimate & { victimUsedAt: number; tieBreak: number } {
  const v = c.view;
  const base = { id: c.id, tieBreak: c.tieBreak, standby: false };
  if (v.failed) return { ...base, finishMs: Infinity, loads: true, blocked: true, failed: true, victimUsedAt: Infinity };
  if (v.status === "loaded") return { ...base, finishMs: c.waitMs + c.serviceMs, loads: false, blocked: false, failed: false, victimUsedAt: -Infinity };
  if (v.status === "loading") {
    const left = Math.max(v.loadMs - v.loadingForMs, v.loadMs / 10);
    return { ...base, finishMs: left + c.waitMs + c.serviceMs, loads: false, blocked: false, failed: false, victimUsedAt: -Infinity };
  }
  if (v.victim === null) return { ...base, finishMs: v.loadMs + c.serviceMs, loads: true, blocked: false, failed: false, victimUsedAt: -Infinity };
  if (v.victim === "busy") return { ...base, finishMs: c.waitMs + c.serviceMs + v.loadMs + c.serviceMs, loads: true, blocked: true, failed: false, victimUsedAt: Infinity };
  // A model used lately and loaded nowhere else will be asked for again. When this load is a second
  // copy of a model loaded on another router (the choice is between waiting there and swapping here),
  // that model's reload here evicts this copy in turn, so the swap costs both loads again, not only
  // its own: counting one let a wait a door over-estimates (it sees only its own requests in flight)
  // tip two routers into swapping two models back and forth (bench/router-doors.mjs).
  // Such a swap is also decided on a wait the request has measured, not only estimated: it is a
  // standby load (pool-gate.ts), taken once the request has waited as long as the load; a wait
  // guessed too long (a door sees only its own requests in flight, and guesses their length until
  // it has timed answers there) swapped two models back and forth (test/multi/shared-router-loads).
  const wanted = !v.victim.loadedElsewhere && now - v.victim.lastUsedAt < RECENT_MS;
  const swapBack = wanted && secondCopy ? v.loadMs : 0;
  return { ...base, standby: wanted && secondCopy, finishMs: v.loadMs + c.serviceMs + (wanted ? v.victim.loadMs : 0) + swapBack, loads: true, blocked: false, failed: false, victimUsedAt: v.victim.lastUsedAt };
}

/**
 * The routers in the order to try them for a request's model: soonest finish first; finishes within
 * noise go where the eviction takes the least recently used model (a server with room first), then
 * by rendezvous score. Loads that finish clearly later than the best are `standby`. Blocked routers
 * follow the others (and are standby), routers where the model failed to load come last (the caller
 * leaves them out).
 */
export function rankPool(choices: readonly PoolChoice[], now: number): PoolEstimate[] {
  // A load where the model is already loaded or loading on another router would be a second copy.
  const present = choices.some((c) => !c.view.failed && c.view.status !== "unloaded");
  const all = choices.map((c) => estimateOn(c, now, present));
  const sorted = [...all].sort((a, b) => {
    if (a.failed !== b.failed) return a.failed ? 1 : -1;
    if (a.blocked !== b.blocked) return a.blocked ? 1 : -1;
    // A swap of a model used lately comes after the router holding the model, which it waits for.
    if (a.standby !== b.standby) return a.standby ? 1 : -1;
    if (!same(a.finishMs, b.finishMs) || a.finishMs === Infinity || b.finishMs === Infinity) return a.finishMs - b.finishMs;
    return a.victimUsedAt - b.victimUsedAt || b.tieBreak - a.tieBreak;
  });
  const best = sorted.find((e) => !e.failed && !e.blocked && !e.standby);
  return sorted.map(({ id, finishMs, loads, blocked, failed, standby }) => ({
    id,
    finishMs,
    loads,
    blocked,
    failed,
    standby: blocked || standby || (best !== undefined && loads && finishMs > best.finishMs && !same(finishMs, best.finishMs)),
  }));
}
