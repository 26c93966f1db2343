// The order a request tries its targets in: open circuits last, and with least-busy the server that
// would finish it soonest first.
import type { HealthSnapshot, UpstreamHealth } from "../../health/upstream-health.ts";
import { circuitState } from "../../health/circuit-breaker.ts";
import { fnv1a } from "./conversation-key.ts";
import { rankServers, type PlacementRequest } from "./rank-servers.ts";
import type { ModelPool } from "./model-pool.ts";
import { rankPool, type PoolEstimate } from "./rank-pool.ts";
import type { ServerLedger } from "./server-ledger.ts";
import { capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";

export interface OrderOptions {
  balance: "ordered" | "least-busy";
  snapshot: HealthSnapshot;
  now: number;
  /** What placement reads from the request (`least-busy`): its conversation and prompt prefixes. */
  placement: PlacementRequest | null;
  /** What this isolate knows of each server, and which models its routers have (src/routing/isolate/isolate-state.ts). */
  ledger: ServerLedger;
  pool: ModelPool;
  /** The requested model: on routers, placement goes by which model each has loaded. */
  model?: string;
  /** Hears each router's estimate for the request's model (standby, blocked, failed: the attempt loop's pool gate, pool-gate.ts, acts on them). */
  onPool?(target: Target, estimate: PoolEstimate): void;
  /** Hears the conversation's home when it goes first over a move, and how long it is worth waiting for there (rank-servers.ts Estimate.holdMs). */
  onHold?(target: Target, holdMs: number): void;
}

/**
 * The order in which a request tries its targets. Tracked servers whose circuit is open go last (a
 * lone upstream is still tried: failing fast would turn a blip into an outage as long as the
 * cooldown). With `balance: "ordered"` the rest keep the configured order. With `"least-busy"` the
 * healthy servers come first, ranked by when the request would finish on each, its prompt cache
 * included (placement/rank-servers.ts); loading ones after them, then targets that place requests
 * themselves (browser sessions) in their configured order.
 */
export function orderTargets(targets: readonly Target[], opts: OrderOptions): Target[] {
  const serverOf = (t: Target) => capabilitiesOf(t).server;
  const health = (t: Target): UpstreamHealth | undefined => {
    const server = serverOf(t);
    return server ? opts.snapshot.upstreams[server.key] : undefined;
  };
  const tier = (t: Target): number => tierOf(health(t), opts.balance, opts.now);
  const byTier = (list: Target[]) => stableSort(list, (a, b) => tier(a) - tier(b));
  if (opts.balance === "ordered") return byTier([...targets]);

  const servers = targets.filter((t) => serverOf(t) && tier(t) === 0);
  const rest = targets.filter((t) => !(serverOf(t) && tier(t) === 0));
  const key = opts.placement?.key ?? "";
  const rank = (list: Target[]) => {
    const byId = new Map(list.map((t) => [serverOf(t)!.key, t]));
    const choices = list.map((t) => {
      const h = health(t);
      const server = serverOf(t)!;
      return { id: server.key, weight: server.weight, load: { slots: h?.slotsTotal ?? 1, sampledBusy: h?.slotsBusy ?? 0, sampledAt: h?.checkedAt ?? 0 }, tieBreak: score(t, key) };
    });
    const ranked = rankServers(choices, opts.placement ?? { key: null, prefixes: [] }, opts.ledger, opts.now);
    // Routers that list the model are placed by what they have loaded (placement/rank-pool.ts), the
    // wait and service from the estimate above: they go first, in that order, then any other server.
    const pooled = opts.model === undefined ? [] : ranked.flatMap((e) => {
      const t = byId.get(e.id)!;
      const view = opts.pool.view(e.id, serverOf(t)!.upstreamModel ?? opts.model!, opts.now);
      return view ? [{ id: e.id, view, waitMs: e.waitMs, serviceMs: e.finishMs - e.waitMs, tieBreak: score(t, key) }] : [];
    });
    if (!pooled.length) {
      const first = ranked[0];
      if (first?.holdMs) opts.onHold?.(byId.get(first.id)!, first.holdMs);
      return ranked.map((e) => byId.get(e.id)!);
    }
    const byPool = rankPool(pooled, opts.now);
    for (const e of byPool) opts.onPool?.(byId.get(e.id)!, e);
    const inPool = new Set(byPool.map((e) => e.id));
    return [...byPool.map((e) => byId.get(e.id)!), ...ranked.filter((e) => !inPool.has(e.id)).map((e) => byId.get(e.id)!)];
  };
  // A server still loading its model answers nothing until it is done: after every warm one.
  const loading = (t: Target) => health(t)?.state === "loading";
  const selfPlacing = rest.filter((t) => !serverOf(t));
  const unhealthy = byTier(rest.filter((t) => serverOf(t)));
  return [...rank(servers.filter((t) => !loading(t))), ...rank(servers.filter(loading)), ...selfPlacing, ...unhealthy];
}

/**
 * How far back the order puts a server for its health: 2 an open circuit, 1 half-open (or, with
 * "least-busy", found down by the hub's sampling), 0 none. "ordered" moves only what the circuit
 * breaker keeps away (passive failures); "least-busy" also what the sampling found down.
 */
function tierOf(h: UpstreamHealth | undefined, balance: OrderOptions["balance"], now: number): number {
  if (!h) return 0;
  const state = circuitState(h.circuit, now);
  if (state === "open") return 2;
  if (state === "half-open" || (balance === "least-busy" && h.state === "down")) return 1;
  return 0;
}

/**
 * Whether the order puts `target` back for a reason of its own, not its load: its circuit, its
 * server down or still loading its model. The shared admission line grants such a server only when
 * no other has a slot free (admission/pool-grants.ts), as one isolate's pass reaches it last.
 */
export function putBack(target: Target, snapshot: HealthSnapshot, balance: OrderOptions["balance"], now: number): boolean {
  const server = capabilitiesOf(target).server;
  const h = server ? snapshot.upstreams[server.key] : undefined;
  return tierOf(h, balance, now) > 0 || (balance === "least-busy" && h?.state === "loading");
}

/** Weighted rendezvous hashing: the target with the highest score for the key. */
export function rendezvous<T extends Target>(targets: readonly T[], key: string): T | undefined {
  let best: T | undefined;
  let bestScore = -Infinity;
  for (const t of targets) {
    const s = score(t, key);
    if (s > bestScore) {
      best = t;
      bestScore = s;
    }
  }
  return best;
}

function score(t: Target, key: string): number {
  const caps = capabilitiesOf(t);
  const h = parseInt(fnv1a(`${key}\u0000${caps.identity}`).slice(0, 13), 16);
  const u = (h + 1) / (2 ** 52 + 2);
  const weight = caps.server?.weight ?? 1;
  return weight / -Math.log(u);
}

function stableSort<T>(list: T[], cmp: (a: T, b: T) => number): T[] {
  return list.map((v, i) => ({ v, i })).sort((a, b) => cmp(a.v, b.v) || a.i - b.i).map((x) => x.v);
}
