// Router-mode loads when a team's requests spread over three doors (test/support/doors.mjs: three
// wrangler dev processes, one set of Durable Objects): two real llama-server routers over one models
// dir (`--models-max 1 -np 2 -t 1 --poll 0`, test/support/router-pool.mjs), each model asked for at
// every door at once. Doors racing must not load a model twice, nor thrash the routers with loads
// one door would not make. Loads are counted from the routers' own logs.
//   PATH=$PWD/node_modules/.bin:$PATH flock /tmp/sy-servers.lock node --test test/multi/shared-router-loads.test.mjs
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startDoors } from "../support/doors.mjs";
import { ask, startRouters } from "../support/router-pool.mjs";

/** @type {import("../support/router-pool.mjs").Routers} */
let pool;
/** @type {import("../support/doors.mjs").Doors} */
let doors;

before(async () => {
  pool = await startRouters({ count: 2, modelsMax: 1 });
  doors = await startDoors(3, { vars: { SWITCHYARD_CONFIG: { routers: pool.routers.map((r) => ({ url: r.url })) } } });
});

after(async () => {
  await doors?.stop();
  await pool?.stop();
});

/** Which routers (0 or 1) hold each model, from their own /models. */
async function holders() {
  /** @type {Record<string, number[]>} */
  const where = {};
  for (let i = 0; i < pool.routers.length; i++) {
    for (const [m, s] of Object.entries(await pool.status(i))) if (s === "loaded" || s === "loading") (where[m] ??= []).push(i);
  }
  return where;
}

describe("router-mode loads over three doors", () => {
  it("a model asked for at every door at once, nothing loaded: one load, every answer exact", { timeout: 60_000 }, async () => {
    assert.equal(pool.totalLoads(), 0);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => ask(doors.at(i), "alpha", { stream: i % 2 === 1 })));
    for (const r of answers) {
      assert.equal(r.status, 200, r.body);
      assert.equal(r.content, "hi from alpha");
    }
    assert.equal(pool.loads().alpha, 1, `alpha loaded ${JSON.stringify(pool.loads())} times over ${JSON.stringify(await holders())}`);
    assert.deepEqual(Object.keys(await holders()), ["alpha"]);
  });

  it("two models alternating over the doors at random, two clients at once: as few loads as one door makes (at most 4), each model on its own router", { timeout: 90_000 }, async () => {
    const before = pool.totalLoads();
    await Promise.all([0, 1].map(async (c) => {
      for (let i = 0; i < 20; i++) {
        const model = (i + c) % 2 ? "beta" : "alpha";
        const r = await ask(doors.any(), model, { stream: i % 3 === 0 });
        assert.equal(r.status, 200, r.body);
        assert.equal(r.content, `hi from ${model}`);
      }
    }));
    const loads = pool.totalLoads() - before;
    const where = await holders();
    assert.ok(loads <= 4, `${loads} loads ${JSON.stringify(pool.loads())}, now ${JSON.stringify(where)}`);
    assert.equal(where.alpha?.length, 1, JSON.stringify(where));
    assert.equal(where.beta?.length, 1, JSON.stringify(where));
    assert.notEqual(where.alpha[0], where.beta[0]);
  });
});
