// Issue 29, zero configuration: one llama-server router (router mode, `--models-max 1 -np 2`) at
// LLAMA_URL and no SWITCHYARD_CONFIG. Its models are listed with their status, any of them is served
// under its own name, two different models asked at once never make the router swap under a request
// (the second waits in Switchyard's line), a model that fails to load is one clear error, and a name
// the router does not list is 404.
//   PATH=$PWD/node_modules/.bin:$PATH flock /tmp/sy-servers.lock node --test test/e2e/router-zero-config.test.mjs
import { after, afterEach, before, it } from "node:test";
import assert from "node:assert/strict";
import { ask, startRouters } from "../support/router-pool.mjs";
import { startSwitchyard } from "../support/switchyard-dev.mjs";

/** @type {import("../support/router-pool.mjs").Routers} */
let pool;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

before(async () => {
  pool = await startRouters({ count: 1, modelsMax: 1 });
  proxy = await startSwitchyard({ vars: { LLAMA_URL: pool.routers[0].url } });
});

after(async () => {
  await proxy?.stop();
  await pool?.stop();
});

// A failure here has been a hang under load that did not come back alone: what the router did (its
// loads and evictions) and what Switchyard logged, for the next one to be read.
afterEach(async (t) => {
  // `passed` is there in Node 22's TestContext, not yet in its types.
  if (/** @type {{ passed?: boolean }} */ (t).passed !== false) return;
  const router = pool.routers[0];
  const lines = router.logs().split("\n").filter((l) => /spawn|stopp|exit|fail|error|proxy/i.test(l));
  const models = /** @type {any} */ (await fetch(`${router.url}/models`).then((r) => r.json(), (e) => String(e)));
  console.log(`router after "${t.name}": loads ${JSON.stringify(pool.loads())}; /models ${JSON.stringify(models?.data?.map((/** @type {any} */ m) => [m.id, m.status?.value, m.status?.failed ?? false]) ?? models)}`);
  console.log(`router log (loads, evictions, failures), last 40:\n${lines.slice(-40).join("\n")}`);
  console.log(`switchyard log, last 4,000 characters:\n${proxy.logs().slice(-4000)}`);
});

async function statuses() {
  const res = await fetch(`${proxy.url}/v1/models`);
  assert.equal(res.status, 200);
  const body = /** @type {{ data: Array<{ id: string, x_switchyard?: { status: string } }> }} */ (await res.json());
  return Object.fromEntries(body.data.map((m) => [m.id, m.x_switchyard?.status]));
}

it("lists the router's models, none loaded; serves one by its name", { timeout: 30_000 }, async () => {
  assert.deepEqual(await statuses(), { alpha: "available", beta: "available", broken: "available", gamma: "available" });
  const r = await ask(proxy.url, "alpha");
  assert.equal(r.status, 200, r.body);
  assert.equal(r.content, "hi from alpha");
  assert.equal((await statuses()).alpha, "loaded");
});

it("two models at once on a --models-max 1 router: every answer right, one swap at a time", { timeout: 40_000 }, async () => {
  const loadsBefore = pool.totalLoads();
  const results = await Promise.all(["beta", "alpha", "beta", "alpha", "gamma", "beta"].map((m, i) => ask(proxy.url, m, { stream: i % 2 === 0 })));
  for (const [i, r] of results.entries()) {
    assert.equal(r.status, 200, `#${i}: ${r.body}`);
    assert.match(r.content ?? "", /^hi from (alpha|beta|gamma)$/);
  }
  // Grouped by model in line: no more loads than switches between the three, and far fewer than six.
  assert.ok(pool.totalLoads() - loadsBefore <= 4, JSON.stringify(pool.loads()));
});

it("a model that fails to load: 502 model_load_failed naming it, once; an unknown name: 404", { timeout: 30_000 }, async () => {
  const r = await ask(proxy.url, "broken");
  assert.equal(r.status, 502, r.body);
  assert.equal(JSON.parse(r.body).error.code, "model_load_failed");
  assert.match(JSON.parse(r.body).error.message, /"broken"/);
  const again = await ask(proxy.url, "broken");
  assert.equal(again.status, 502);
  assert.equal(pool.loads().broken, 1);
  const unknown = await ask(proxy.url, "nosuch");
  assert.equal(unknown.status, 404, unknown.body);
  assert.equal(JSON.parse(unknown.body).error.code, "model_not_found");
});
