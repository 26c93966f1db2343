import { describe, expect, it } from "vitest";
import { ModelPool } from "../../../../src/routing/placement/model-pool.ts";
import { rankPool, type PoolChoice } from "../../../../src/routing/placement/rank-pool.ts";
import type { RouterModel } from "../../../../src/health/parse-router-models.ts";

const ALL = ["alpha", "beta", "gamma"];
const models = (loaded: string[]): RouterModel[] => ALL.map((id) => ({ id, status: loaded.includes(id) ? "loaded" : "unloaded", failed: false }));
const LOAD = 1500;
const SERVICE = 90;

/** Two routers with --models-max 1 whose loads were measured at LOAD ms. */
function twoRouters(spec: Record<string, string[]>): ModelPool {
  const p = new ModelPool();
  for (const [s, loaded] of Object.entries(spec)) p.absorb(s, { modelsMax: 1, models: models(loaded) }, 0);
  for (const s of Object.keys(spec)) for (const m of ALL) {
    // Teach each router each model's load time (then put it back as it was).
    const before = p.loaded(s);
    const a = p.begin(s, m, 1);
    a.served(1 + LOAD);
    a.end(1 + LOAD);
    p.absorb(s, { modelsMax: 1, models: models(before.length ? before : spec[s]!) }, 2 + LOAD);
  }
  return p;
}

function choose(p: ModelPool, model: string, now: number, wait: Record<string, number> = {}) {
  const choices: PoolChoice[] = ["A", "B"].map((id, i) => ({ id, view: p.view(id, model, now)!, waitMs: wait[id] ?? 0, serviceMs: SERVICE, tieBreak: i }));
  return rankPool(choices, now);
}

/** Places and serves one request at once, as the attempt stage reports it. */
function serve(p: ModelPool, model: string, now: number, wait: Record<string, number> = {}): string {
  const id = choose(p, model, now, wait)[0]!.id;
  const a = p.begin(id, model, now);
  a.served(now + (p.view(id, model, now)!.status === "loaded" ? 0 : LOAD));
  a.end(now + SERVICE);
  return id;
}

describe("rankPool", () => {
  it("alternating two models over two --models-max 1 routers: each gets its own, two loads in all", () => {
    const p = twoRouters({ A: [], B: [] });
    let loads = 0;
    const where: Record<string, Set<string>> = { alpha: new Set(), beta: new Set() };
    for (let i = 0; i < 40; i++) {
      const model = i % 2 ? "beta" : "alpha";
      const now = 10_000 + i * 1000;
      const before = new Set(p.loaded("A").map((m) => `A:${m}`).concat(p.loaded("B").map((m) => `B:${m}`)));
      const id = serve(p, model, now);
      if (!before.has(`${id}:${model}`)) loads++;
      where[model]!.add(id);
    }
    expect(loads).toBe(2);
    expect(where.alpha!.size).toBe(1);
    expect(where.beta!.size).toBe(1);
  });

  it("a third model evicts the least recently used, not the recent one", () => {
    const p = twoRouters({ A: ["alpha"], B: ["beta"] });
    serve(p, "alpha", 10_000);
    serve(p, "beta", 11_000);
    expect(choose(p, "gamma", 12_000)[0]!.id).toBe("A");
    serve(p, "beta", 13_000);
    serve(p, "alpha", 14_000);
    expect(choose(p, "gamma", 15_000)[0]!.id).toBe("B");
  });

  it("waits a little for the server holding its model; loads a second copy when the wait is longer than the load", () => {
    const p = twoRouters({ A: ["alpha"], B: ["beta"] });
    serve(p, "beta", 5_000);
    const short = choose(p, "alpha", 10_000, { A: 500 });
    expect(short[0]!.id).toBe("A");
    expect(short[1]).toMatchObject({ id: "B", loads: true, standby: true });
    // beta idle for longer than RECENT_MS: evicting it costs nothing but the load.
    const long = choose(p, "alpha", 10_000 + 11 * 60_000, { A: 5000 });
    expect(long[0]).toMatchObject({ id: "B", loads: true, standby: false });
  });

  it("swapping out a model used lately counts both reloads: a wait shorter than them stays; a longer one swaps, once the request has waited as long as the load", () => {
    const p = twoRouters({ A: ["alpha"], B: ["beta"] });
    serve(p, "alpha", 10_000);
    serve(p, "beta", 10_500);
    // Staying waits 2.5 loads; swapping on A costs beta's load, alpha's reload and beta's own again.
    expect(choose(p, "beta", 11_000, { B: 2.5 * LOAD })[0]).toMatchObject({ id: "B", loads: false });
    // …but only once the request has waited as long as the load, not on the estimate alone: the swap
    // is a standby load after the router holding the model (pool-gate.ts lets it go after that wait).
    const longer = choose(p, "beta", 11_000, { B: 4 * LOAD });
    expect(longer[0]).toMatchObject({ id: "B", loads: false });
    expect(longer[1]).toMatchObject({ id: "A", loads: true, standby: true });
  });

  it("never plans an eviction of a model with requests in flight; a failed load goes last", () => {
    const p = twoRouters({ A: ["alpha"], B: ["beta"] });
    p.begin("B", "beta", 10_000);
    const r = choose(p, "gamma", 10_010);
    expect(r.find((e) => e.id === "B")).toMatchObject({ blocked: true, standby: true });
    expect(r[0]!.id).toBe("A");
    const f = p.begin("A", "gamma", 10_020);
    f.loadFailed(10_030);
    f.end(10_030);
    expect(choose(p, "gamma", 10_040).at(-1)).toMatchObject({ id: "A", failed: true });
  });
});
