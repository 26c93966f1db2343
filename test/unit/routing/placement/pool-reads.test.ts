// How an isolate's copy of its routers is kept current (placement/pool-reads.ts), over recorded
// router answers (test/fixtures/llama-router: `/props` and `/models` of a 3.21.1 router with alpha
// loaded): before a request would make a router load its model, an old copy is read again and waited
// for, so a load another isolate made since is seen instead of evicted.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import props from "../../../fixtures/llama-router/props.body.json";
import modelsAlphaLoaded from "../../../fixtures/llama-router/models-alpha-loaded.body.json";
import { upstreamKey } from "../../../../src/health/upstream-health.ts";
import { ModelPool } from "../../../../src/routing/placement/model-pool.ts";
import { BEFORE_LOAD_FRESH_MS, PoolReads } from "../../../../src/routing/placement/pool-reads.ts";
import type { Target } from "../../../../src/routing/target.ts";

const R1: Target = { kind: "llama", url: "http://10.0.2.1:8080", name: "R1" };
const R2: Target = { kind: "llama", url: "http://10.0.2.2:8080", name: "R2" };
const key = (t: Target) => upstreamKey((t as { url: string }).url);

/** The recorded `/models` with alpha (and the others listed) at `status`. */
const modelsWith = (alpha: "loaded" | "unloaded") => ({ data: modelsAlphaLoaded.data.map((m) => (m.id === "alpha" ? { ...m, status: { ...m.status, value: alpha } } : m)) });

let answers: Record<string, unknown>;
let gets: string[];

beforeEach(() => {
  gets = [];
  answers = {};
  vi.stubGlobal("fetch", async (url: string) => {
    gets.push(url);
    const u = new URL(url);
    const body = u.pathname === "/props" && !u.search ? props : answers[`${u.origin}${u.pathname}`];
    return body === undefined ? new Response("not found", { status: 404 }) : Response.json(body);
  });
});
afterEach(() => vi.unstubAllGlobals());

const env = {} as Env;
const defer = () => {};

describe("PoolReads.beforeLoad", () => {
  it("reads an old copy again before a load, and sees the model another isolate loaded", async () => {
    const pool = new ModelPool();
    const reads = new PoolReads(pool);
    answers[`${R1.url}/models`] = modelsWith("unloaded");
    answers[`${R2.url}/models`] = modelsWith("unloaded");
    const t0 = Date.now();
    await reads.discover([R1, R2], env, defer, {}, t0);
    expect(pool.view(key(R1), "alpha", t0)?.status).toBe("unloaded");
    // Another isolate loads alpha on R2.
    answers[`${R2.url}/models`] = modelsWith("loaded");
    gets = [];
    const later = Date.now() + BEFORE_LOAD_FRESH_MS;
    const reading = reads.beforeLoad([R1, R2], "alpha", env, defer, later);
    expect(reading).toBeDefined();
    await reading;
    expect(gets.filter((u) => u.endsWith("/models"))).toHaveLength(2);
    expect(pool.view(key(R2), "alpha", Date.now())?.status).toBe("loaded");
    // Loaded somewhere: the next request places on what it knows, without a read.
    expect(reads.beforeLoad([R1, R2], "alpha", env, defer, later + 1000)).toBeUndefined();
  });

  it("reads nothing when the copy is younger than BEFORE_LOAD_FRESH_MS, or when no router lists the model", async () => {
    const pool = new ModelPool();
    const reads = new PoolReads(pool);
    answers[`${R1.url}/models`] = modelsWith("unloaded");
    const t0 = Date.now();
    await reads.discover([R1], env, defer, {}, t0);
    gets = [];
    expect(reads.beforeLoad([R1], "alpha", env, defer, t0 + BEFORE_LOAD_FRESH_MS - 1)).toBeUndefined();
    expect(reads.beforeLoad([R1], "not-listed", env, defer, t0 + 10_000)).toBeUndefined();
    expect(gets).toEqual([]);
  });
});
