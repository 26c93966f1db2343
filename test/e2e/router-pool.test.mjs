// Issue 29: a pool of llama-server routers (router mode), placed by which model each has loaded. Two
// real routers over one models dir (alpha, beta, gamma = the tiny model; broken = a truncated GGUF),
// `--models-max 1 -np 2 -t 1 --poll 0`, behind Switchyard (`wrangler dev`) configured with the
// `routers` shorthand only. Loads are counted from the routers' own logs.
//   PATH=$PWD/node_modules/.bin:$PATH flock /tmp/sy-servers.lock node --test test/e2e/router-pool.test.mjs
// The figures against a pinned baseline: bench/router-placement.mjs.
import { after, before, it } from "node:test";
import assert from "node:assert/strict";
import { ask, startRouters } from "../support/router-pool.mjs";
import { startSwitchyard } from "../support/switchyard-dev.mjs";

/** @type {import("../support/router-pool.mjs").Routers} */
let pool;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

before(async () => {
  pool = await startRouters({ count: 2, modelsMax: 1 });
  proxy = await startSwitchyard({ vars: { SWITCHYARD_CONFIG: { routers: pool.routers.map((r) => ({ url: r.url })) } } });
});

after(async () => {
  await proxy?.stop();
  await pool?.stop();
});

/** GET /v1/models: each model's x_switchyard status. */
async function listed() {
  const res = await fetch(`${proxy.url}/v1/models`);
  assert.equal(res.status, 200);
  const body = /** @type {{ data: Array<{ id: string, x_switchyard?: { status: string, servers: Array<{ target: string, status: string }> } }> }} */ (await res.json());
  return Object.fromEntries(body.data.map((m) => [m.id, m.x_switchyard]));
}

/** Which router (0 or 1) holds each model, from their own /models. */
async function holders() {
  /** @type {Record<string, number[]>} */
  const where = {};
  for (let i = 0; i < pool.routers.length; i++) {
    for (const [m, s] of Object.entries(await pool.status(i))) if (s === "loaded" || s === "loading") (where[m] ??= []).push(i);
  }
  return where;
}

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

it("lists every model of the pool, nothing loaded, without loading anything", async () => {
  const models = await listed();
  for (const m of ["alpha", "beta", "gamma", "broken"]) {
    assert.ok(models[m], `${m} missing from /v1/models: ${JSON.stringify(models)}`);
    assert.equal(models[m].status, "available", `${m}: ${JSON.stringify(models[m])}`);
    assert.equal(models[m].servers.length, 2);
  }
  assert.equal(pool.totalLoads(), 0, "listing the models loaded one");
});

it("alternating two models over two --models-max 1 routers: at most 4 loads in 40 requests, sequentially and 2 in flight", { timeout: 60_000 }, async () => {
  for (let i = 0; i < 40; i++) {
    const model = i % 2 ? "beta" : "alpha";
    const r = await ask(proxy.url, model);
    assert.equal(r.status, 200, r.body);
    assert.equal(r.content, `hi from ${model}`);
  }
  const sequential = pool.totalLoads();
  assert.ok(sequential <= 4, `sequential: ${sequential} loads ${JSON.stringify(pool.loads())}`);
  // Two clients at once, each alternating (so both models are asked for at the same time).
  await Promise.all([0, 1].map(async (c) => {
    for (let i = 0; i < 20; i++) {
      const model = (i + c) % 2 ? "beta" : "alpha";
      const r = await ask(proxy.url, model, { stream: i % 3 === 0 });
      assert.equal(r.status, 200, r.body);
      assert.equal(r.content, `hi from ${model}`);
    }
  }));
  const both = pool.totalLoads() - sequential;
  assert.ok(both <= 4, `2 in flight: ${both} loads ${JSON.stringify(pool.loads())}`);
  const where = await holders();
  assert.equal(where.alpha?.length, 1, JSON.stringify(where));
  assert.equal(where.beta?.length, 1, JSON.stringify(where));
  assert.notEqual(where.alpha[0], where.beta[0]);
  // The list tells loaded from not.
  const models = await listed();
  assert.equal(models.alpha?.status, "loaded");
  assert.equal(models.beta?.status, "loaded");
  assert.equal(models.gamma?.status, "available");
  assert.deepEqual(models.alpha?.servers.map((s) => s.status).sort(), ["available", "loaded"]);
});

it("a third model evicts the least recently used one and leaves the recent one loaded", { timeout: 30_000 }, async () => {
  // beta is the most recent; alpha the least.
  assert.equal((await ask(proxy.url, "alpha")).status, 200);
  assert.equal((await ask(proxy.url, "beta")).status, 200);
  const before = await holders();
  const r = await ask(proxy.url, "gamma");
  assert.equal(r.status, 200, r.body);
  assert.equal(r.content, "hi from gamma");
  const where = await holders();
  assert.deepEqual(where.beta, before.beta, `beta moved: ${JSON.stringify(where)}`);
  assert.deepEqual(where.gamma, before.alpha, `gamma did not replace alpha: ${JSON.stringify(where)}`);
  assert.equal(where.alpha, undefined);
});

it("a model that fails to load: one attempt, a clear error naming it, and the pool as it was", { timeout: 30_000 }, async () => {
  const before = await holders();
  const loadsBefore = pool.loads().broken ?? 0;
  const r = await ask(proxy.url, "broken");
  assert.equal(r.status, 502, r.body);
  const err = JSON.parse(r.body).error;
  assert.equal(err.code, "model_load_failed");
  assert.match(err.message, /"broken" failed to load/);
  assert.equal(r.attempts, "1");
  assert.equal((pool.loads().broken ?? 0) - loadsBefore, 1);
  // The router evicted a model for the load that failed: Switchyard puts it back.
  let where = await holders();
  for (let i = 0; i < 50 && JSON.stringify(where) !== JSON.stringify(before); i++) {
    await sleep(100);
    where = await holders();
  }
  assert.deepEqual(where, before, "the pool did not return to what it held");
  // Asked again: answered at once, nothing loaded or evicted anywhere.
  const again = await ask(proxy.url, "broken");
  assert.equal(again.status, 502);
  assert.equal(JSON.parse(again.body).error.code, "model_load_failed");
  assert.equal((pool.loads().broken ?? 0) - loadsBefore, 1, "broken was loaded again");
  assert.deepEqual(await holders(), before);
  const models = await listed();
  assert.ok(models.broken?.servers.some((s) => s.status === "failed"), JSON.stringify(models.broken));
});

it("an unknown model name is 404 model_not_found, naming the models there are", async () => {
  const r = await ask(proxy.url, "nosuch");
  assert.equal(r.status, 404, r.body);
  const err = JSON.parse(r.body).error;
  assert.equal(err.code, "model_not_found");
  assert.match(err.message, /"alpha"/);
});
