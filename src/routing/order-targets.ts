import { upstreamKey, type HealthSnapshot, type UpstreamHealth } from "../health/upstream-health.ts";
import { circuitState } from "../health/circuit-breaker.ts";
import { fnv1a } from "./conversation-key.ts";
import type { Target } from "./target.ts";

export interface OrderOptions {
  balance: "ordered" | "least-busy";
  snapshot: HealthSnapshot;
  now: number;
  /** conversationKey() of the request, for affinity. */
  key: string | null;
}

/**
 * The order in which a request tries its targets. Llama targets whose circuit is open go last (a lone upstream is still tried: failing fast would turn a blip into an
 * outage as long as the cooldown). With `balance: "ordered"` the rest keep the configured order.
 * With `"least-busy"` the healthy llama targets come first: the conversation's own upstream (weighted
 * rendezvous hashing of the key: stable across isolates and turns, so the prompt cache is reused)
 * while it has a free slot, then ready before loading or unknown, then the lowest share of busy slots
 * per weight; browser targets follow in their configured order.
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

  const llama = targets.filter((t) => t.kind === "llama" && tier(t) === 0) as Array<Extract<Target, { kind: "llama" }>>;
  const rest = targets.filter((t) => !(t.kind === "llama" && tier(t) === 0));
  const load = (t: Extract<Target, { kind: "llama" }>) => {
    const h = health(t);
    if (!h?.slotsTotal) return 0.5 / (t.weight ?? 1);
    return (h.slotsBusy ?? 0) / h.slotsTotal / (t.weight ?? 1);
  };
  const warmth = (t: Target) => ({ ready: 0, unknown: 1, loading: 2, down: 3 })[health(t)?.state ?? "unknown"];
  const hasFreeSlot = (t: Target) => {
    const h = health(t);
    return !h?.slotsTotal || (h.slotsBusy ?? 0) < h.slotsTotal;
  };
  const home = opts.key ? rendezvous(llama, opts.key) : undefined;
  const sorted = [...llama].sort((a, b) => {
    if (home && a !== b && (a === home || b === home) && hasFreeSlot(home) && warmth(home) <= 1) return a === home ? -1 : 1;
    return warmth(a) - warmth(b) || load(a) - load(b) || score(b, opts.key ?? "") - score(a, opts.key ?? "");
  });
  const browsers = rest.filter((t) => t.kind === "browser");
  const unhealthy = byTier(rest.filter((t) => t.kind === "llama"));
  return [...sorted, ...browsers, ...unhealthy];
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
