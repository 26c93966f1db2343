// Router pools' gate over a pass of attempts: which routers leave the plan, and which are refused an
// attempt (a failed load, a model that would evict one in use, a standby load after a busy refusal).
import { beforeEach, describe, expect, it } from "vitest";
import type { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { upstreamKey } from "../../../../src/health/upstream-health.ts";
import { ModelPool, type ModelStatus } from "../../../../src/routing/placement/model-pool.ts";
import { PoolGate, pooledModel, withoutUnlisted, type PoolVerdict } from "../../../../src/routing/placement/pool-gate.ts";
import type { PoolEstimate } from "../../../../src/routing/placement/rank-pool.ts";
import type { Target } from "../../../../src/routing/target.ts";

let pool = new ModelPool();

const R1: Target = { kind: "llama", url: "http://10.0.1.1:8080", name: "R1" };
const R2: Target = { kind: "llama", url: "http://10.0.1.2:8080", name: "R2" };
const PLAIN: Target = { kind: "llama", url: "http://10.0.1.3:8080", name: "plain" };

/** `router` made a known router with `--models-max` `max` and these models. */
function router(t: Target, max: number, models: Record<string, ModelStatus | "failed">): void {
  pool.absorb(key(t), { modelsMax: max, models: Object.entries(models).map(([id, s]) => ({ id, status: s === "failed" ? "unloaded" : s, failed: s === "failed" })) }, Date.now());
}

const key = (t: Target) => upstreamKey((t as { url: string }).url);
const refusal = (v: PoolVerdict): ProxyError | undefined => ("refused" in v ? v.refused : undefined);
const standby: PoolEstimate = { id: "R1", finishMs: 20_000, loads: true, blocked: false, failed: false, standby: true };

describe("the router pools' gate", () => {
  beforeEach(() => void (pool = new ModelPool()));

  it("a target that is no router, or a router that does not list the model, goes without an entry", () => {
    router(R1, 1, { alpha: "loaded" });
    const gate = new PoolGate(pool, [PLAIN, R1], "beta", Date.now(), Date.now());
    expect(gate.check(PLAIN, undefined, false)).toEqual({ entry: undefined });
    expect(gate.check(R1, undefined, false)).toEqual({ entry: undefined });
    expect(pooledModel(pool, R1, "alpha")).toBe("alpha");
    expect(pooledModel(pool, PLAIN, "alpha")).toBeUndefined();
  });

  it("a router that has the model goes, with what the pool knows of it there", () => {
    router(R1, 1, { alpha: "loaded" });
    const v = new PoolGate(pool, [R1], "alpha", Date.now(), Date.now()).check(R1, undefined, false);
    expect("entry" in v && v.entry).toMatchObject({ server: key(R1), model: "alpha", view: { status: "loaded", failed: false } });
  });

  it("a model that failed to load on a router lately: refused there (not busy), and not loaded elsewhere in place of a model in use", () => {
    router(R1, 1, { alpha: "failed" });
    router(R2, 1, { beta: "loaded", alpha: "unloaded" });
    const gate = new PoolGate(pool, [R1, R2], "alpha", Date.now(), Date.now());
    const here = refusal(gate.check(R1, undefined, false));
    expect(here?.code).toBe("model_load_failed");
    expect(here?.busy).toBeFalsy();
    expect(here?.message).toContain("R1");
    // R2 would have to evict beta to load it: refused with R1's failure.
    const there = refusal(gate.check(R2, undefined, false));
    expect(there?.code).toBe("model_load_failed");
    expect(there?.message).toContain("R1");
  });

  it("after a failed load elsewhere, a router with room may still load it", () => {
    router(R1, 1, { alpha: "failed" });
    router(R2, 2, { beta: "loaded", alpha: "unloaded" });
    const v = new PoolGate(pool, [R1, R2], "alpha", Date.now(), Date.now()).check(R2, undefined, false);
    expect(refusal(v)).toBeUndefined();
  });

  it("a router that would evict a model with requests in flight is busy for this model", () => {
    router(R1, 1, { beta: "loaded", alpha: "unloaded" });
    const inFlight = pool.begin(key(R1), "beta", Date.now());
    const busy = refusal(new PoolGate(pool, [R1], "alpha", Date.now(), Date.now()).check(R1, undefined, false));
    expect(busy).toMatchObject({ status: 503, code: "no_capacity", busy: true, retryAfter: 1 });
    inFlight.end(Date.now());
    expect(refusal(new PoolGate(pool, [R1], "alpha", Date.now(), Date.now()).check(R1, undefined, false))).toBeUndefined();
  });

  it("a standby load waits for a router refused for capacity in this pass, until the request has waited as long as the load", () => {
    router(R1, 2, { alpha: "unloaded" });
    const now = Date.now();
    const gate = new PoolGate(pool, [R1], "alpha", now, now);
    expect(refusal(gate.check(R1, standby, false))).toBeUndefined();
    expect(refusal(gate.check(R1, standby, true))?.busy).toBe(true);
    // Waited longer than the load would take (20 s before any is measured): it loads.
    const late = new PoolGate(pool, [R1], "alpha", now, now - 60_000);
    expect(refusal(late.check(R1, standby, true))).toBeUndefined();
  });

  it("withoutUnlisted: routers that do not list the model leave the plan; none left, 404 naming what they list", () => {
    router(R1, 1, { alpha: "loaded" });
    router(R2, 1, { beta: "loaded" });
    expect(withoutUnlisted(pool, [R1, R2, PLAIN], "alpha")).toEqual([R1, PLAIN]);
    const plan = [R1, R2];
    expect(withoutUnlisted(pool, plan, "alpha")).toEqual([R1]);
    expect(() => withoutUnlisted(pool, plan, "gamma")).toThrowError(/not served here.*"alpha", "beta"/);
    try {
      withoutUnlisted(pool, plan, "gamma");
    } catch (e) {
      expect((e as ProxyError).status).toBe(404);
      expect((e as ProxyError).code).toBe("model_not_found");
    }
  });
});
