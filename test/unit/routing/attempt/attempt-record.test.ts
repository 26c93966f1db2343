// One attempt in the isolate's books: its place in the ledger and a router's pool while it runs, what
// its end frees, and the health signals and placement note of its outcome.
import { beforeEach, describe, expect, it } from "vitest";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import type { HealthRecorder } from "../../../../src/health/health-client.ts";
import type { PlacementNote } from "../../../../src/health/health-report.ts";
import { EMPTY_SNAPSHOT, upstreamKey } from "../../../../src/health/upstream-health.ts";
import { AttemptRecord, type RecordOptions } from "../../../../src/routing/attempt/attempt-record.ts";
import { resetIsolateState } from "../../../../src/routing/isolate/isolate-state.ts";
import type { ModelPool } from "../../../../src/routing/placement/model-pool.ts";
import type { ServerLedger } from "../../../../src/routing/placement/server-ledger.ts";
import { PoolGate } from "../../../../src/routing/placement/pool-gate.ts";
import { promptPrefixes } from "../../../../src/routing/placement/prompt-prefixes.ts";
import type { Target } from "../../../../src/routing/target.ts";

const LLAMA: Target = { kind: "llama", url: "http://127.0.0.1:9/record", name: "llama" };
const ROUTER: Target = { kind: "llama", url: "http://127.0.0.1:9/router", name: "router" };
const BROWSER: Target = { kind: "browser", model: "x", name: "browser:x" };
const url = (t: Target) => (t as { url: string }).url;
const key = (t: Target) => upstreamKey(url(t));

/** The request's health signals, as calls. */
function signals() {
  const calls: Array<[string, ...unknown[]]> = [];
  const health = {
    success: (url: string) => calls.push(["success", url]),
    failure: (url: string, kind: string, retryAfterMs?: number) => calls.push(["failure", url, kind, retryAfterMs]),
    placed: (note: PlacementNote) => calls.push(["placed", note.url, note.key]),
    snapshot: () => EMPTY_SNAPSHOT,
  } as unknown as HealthRecorder;
  return { calls, health };
}

function options(health: HealthRecorder, more: Partial<RecordOptions> = {}): RecordOptions {
  return { health, placement: null, env: {}, defer: () => {}, ...more };
}

let ledger: ServerLedger;
let pool: ModelPool;

describe("an attempt's record", () => {
  beforeEach(() => {
    ({ ledger, pool } = resetIsolateState());
  });

  it("holds a place in the ledger while it runs; a success is the server's health signal and leaves the place to the answer", () => {
    const { calls, health } = signals();
    const record = new AttemptRecord(LLAMA, undefined, options(health), Date.now());
    expect(ledger.inflightCount(key(LLAMA))).toBe(1);
    const placed = record.succeeded(Date.now(), { chars: 120, prefixes: [] });
    expect(calls).toEqual([["success", url(LLAMA)]]);
    expect(placed).toMatchObject({ server: key(LLAMA), chars: 120 });
    expect(ledger.inflightCount(key(LLAMA))).toBe(1);
    placed!.end(Date.now());
    expect(ledger.inflightCount(key(LLAMA))).toBe(0);
  });

  it("a success with placement: the ledger learns the prompt's prefixes there, and the hub gets a placement note", () => {
    const { calls, health } = signals();
    const prefixes = promptPrefixes([{ role: "user", content: "hello there" }]);
    const record = new AttemptRecord(LLAMA, undefined, options(health, { placement: { key: "conv-1", prefixes } }), Date.now());
    const placed = record.succeeded(Date.now(), null);
    expect(calls.map((c) => c[0])).toEqual(["success", "placed"]);
    expect(calls[1]).toEqual(["placed", key(LLAMA), "conv-1"]);
    expect(placed?.chars).toBe(prefixes.at(-1)!.chars);
    placed!.end(Date.now());
  });

  it("a failure ends its place at once; its health signal is sent only when asked (not for a skip)", () => {
    const { calls, health } = signals();
    const record = new AttemptRecord(LLAMA, undefined, options(health), Date.now());
    record.failed(new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: "500" }));
    expect(ledger.inflightCount(key(LLAMA))).toBe(0);
    expect(calls).toEqual([]);
    record.unhealthy("broken", 1500);
    expect(calls).toEqual([["failure", url(LLAMA), "broken", 1500]]);
  });

  it("a target without a tracked server (a browser session) has no place and sends no signal", () => {
    const { calls, health } = signals();
    const record = new AttemptRecord(BROWSER, undefined, options(health), Date.now());
    expect(record.succeeded(Date.now(), { chars: 10, prefixes: [] })).toBeUndefined();
    record.unhealthy("unreachable", undefined);
    expect(calls).toEqual([]);
  });

  it("on a router: the model is loading while the attempt runs, and loaded once it answers", () => {
    pool.absorb(key(ROUTER), { modelsMax: 2, models: [{ id: "alpha", status: "unloaded", failed: false }] }, Date.now());
    const gate = new PoolGate(pool, [ROUTER], "alpha", Date.now(), Date.now()).check(ROUTER, undefined, false);
    const entry = "entry" in gate ? gate.entry : undefined;
    expect(entry).toBeDefined();
    const { health } = signals();
    const record = new AttemptRecord(ROUTER, entry, options(health), Date.now());
    expect(pool.view(key(ROUTER), "alpha", Date.now())?.status).toBe("loading");
    record.succeeded(Date.now(), null)!.end(Date.now());
    expect(pool.view(key(ROUTER), "alpha", Date.now())?.status).toBe("loaded");
  });

  it("on a router whose load failed: the model is marked failed there, and the models it evicted for the load are put back in the background", async () => {
    pool.absorb(key(ROUTER), { modelsMax: 1, models: [{ id: "beta", status: "loaded", failed: false }, { id: "alpha", status: "unloaded", failed: false }] }, Date.now());
    const gate = new PoolGate(pool, [ROUTER], "alpha", Date.now(), Date.now()).check(ROUTER, undefined, false);
    const entry = "entry" in gate ? gate.entry : undefined;
    const deferred: Array<Promise<unknown>> = [];
    const { health } = signals();
    const record = new AttemptRecord(ROUTER, entry, options(health, { defer: (p) => deferred.push(p) }), Date.now());
    // The router will evict beta for alpha.
    expect(pool.view(key(ROUTER), "beta", Date.now())?.status).toBe("unloaded");
    record.failed(new ProxyError({ status: 502, code: "model_load_failed", message: "failed to load" }));
    expect(pool.view(key(ROUTER), "alpha", Date.now())?.failed).toBe(true);
    expect(deferred).toHaveLength(1);
    expect(ledger.inflightCount(key(ROUTER))).toBe(0);
    await Promise.allSettled(deferred);
  });
});
