import { upstreamKey, type HealthSnapshot, type UpstreamHealth } from "../health/upstream-health.ts";
import { circuitState } from "../health/circuit-breaker.ts";
import { fnv1a } from "./placement/conversation-key.ts";
import { ledger } from "./placement/isolate-ledger.ts";
import { rankServers, type PlacementRequest } from "./placement/rank-servers.ts";
import type { ServerLedger } from "./placement/server-ledger.ts";
import type { Target } from "./target.ts";

export interface OrderOptions {
  balance: "ordered" | "least-busy";
  snapshot: HealthSnapshot;
  now: number;
  /** What placement reads from the request (`least-busy`): its conversation and prompt prefixes. */
  placement: PlacementRequest | null;
  /** What this isolate knows of each server (default: the isolate's own). */
  ledger?: ServerLedger;
}

/**
 * The order in which a request tries its targets. Llama targets whose circuit is open go last (a
 * lone upstream is still tried: failing fast would turn a blip into an outage as long as the
 * cooldown). With `balance: "ordered"` the rest keep the configured order. With `"least-busy"` the
 * healthy llama-servers come first, ranked by when the request would finish on each, its prompt
 * cache included (placement/rank-servers.ts); loading ones after them, then browser targets in their
 * configured order.
 */
export function orderTargets(targets: readonly Target[], opts: OrderOptions): Target[] {
  const health = (t: Target): UpstreamHealth | undefined => (t.kind === "llama" ? opts.snapshot.upstreams[upstreamKey(t.url)] : undefined);
  // "ordered" moves only what the circuit breaker keeps away (passive failures); "least-busy" also
  // what the hub's sampling found down.
  const tier = (t: Target): number => {
    const h = health(t);
    if (!h) return 0;
    const state = circuitState(h.circuit, opts.now);
    if (state === "open") return 2;
    if (state === "half-open" || (opts.balance === "least-busy" && h.state === "down")) return 1;
    return 0;
  };
  const byTier = (list: Target[]) => stableSort(list, (a, b) => tier(a) - tier(b));
  if (opts.balance === "ordered") return byTier([...targets]);

  type Llama = Extract<Target, { kind: "llama" }>;
  const llama = targets.filter((t): t is Llama => t.kind === "llama" && tier(t) === 0);
  const rest = targets.filter((t) => !(t.kind === "llama" && tier(t) === 0));
  const key = opts.placement?.key ?? "";
  const rank = (list: Llama[]) => {
    const byId = new Map(list.map((t) => [upstreamKey(t.url), t]));
    const choices = list.map((t) => {
      const h = health(t);
      return { id: upstreamKey(t.url), weight: t.weight ?? 1, load: { slots: h?.slotsTotal ?? 1, sampledBusy: h?.slotsBusy ?? 0, sampledAt: h?.checkedAt ?? 0 }, tieBreak: score(t, key) };
    });
    return rankServers(choices, opts.placement ?? { key: null, prefixes: [] }, opts.ledger ?? ledger, opts.now).map((e) => byId.get(e.id)!);
  };
  // A server still loading its model answers nothing until it is done: after every warm one.
  const loading = (t: Target) => health(t)?.state === "loading";
  const browsers = rest.filter((t) => t.kind === "browser");
  const unhealthy = byTier(rest.filter((t) => t.kind === "llama"));
  return [...rank(llama.filter((t) => !loading(t))), ...rank(llama.filter(loading)), ...browsers, ...unhealthy];
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
  const h = parseInt(fnv1a(`${key}\u0000${t.kind === "llama" ? upstreamKey(t.url) : t.model}`).slice(0, 13), 16);
  const u = (h + 1) / (2 ** 52 + 2);
  const weight = t.kind === "llama" ? (t.weight ?? 1) : 1;
  return weight / -Math.log(u);
}

function stableSort<T>(list: T[], cmp: (a: T, b: T) => number): T[] {
  return list.map((v, i) => ({ v, i })).sort((a, b) => cmp(a.v, b.v) || a.i - b.i).map((x) => x.v);
}
