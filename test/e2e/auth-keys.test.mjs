// Team keys end to end: `npm start` (wrangler dev on real workerd), the `npm run keys` CLI against it,
// 200-request bursts against each limit (what slipped past must be zero), revocation, brute force,
// and a search of every log line and response body for a secret.
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { startFixtureUpstream } from "../support/fixture-upstream.mjs";
import { startLauncher } from "../support/switchyard-dev.mjs";

const run = promisify(execFile);
const ADMIN_TOKEN = `adm-${randomBytes(24).toString("base64url")}`;
const secrets = [ADMIN_TOKEN];
/** @type {string[]} */
const bodies = [];
/** @type {Awaited<ReturnType<typeof startFixtureUpstream>>} */
let fixtures;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

/**
 * What `npm run keys -- … --json` prints, and the usage the API reports (src/routes/admin.ts).
 * @typedef {import("../../scripts/keys.mjs").PublicKey & { key: string }} CreatedKey
 * @typedef {{ totals: { requests: number, prompt_tokens: number, completion_tokens: number }, usage: Array<{ model: string, backend: string }> }} Usage
 * @typedef {{ status: number, retryAfter: string | null, text: string }} Settled
 */

before(async () => {
  fixtures = await startFixtureUpstream();
  const f = (/** @type {string} */ path) => ({ targets: [{ kind: "llama", url: `${fixtures.url}/${path}` }] });
  proxy = await startLauncher({
    vars: {
      ADMIN_TOKEN,
      // A key store of its own, so this file's keys never lock the other e2e files' dev server state.
      KEY_STORE_NAME: `e2e-${randomBytes(6).toString("hex")}`,
      SWITCHYARD_CONFIG: { models: { m: f("behave/say/hello"), endless: f("behave/endless"), other: f("behave/say/hi") } },
    },
  });
});

after(async () => {
  await proxy?.stop();
  await fixtures?.close();
});

/** @param {string[]} args */
async function keys(...args) {
  const { stdout } = await run("npm", ["run", "--silent", "keys", "--", ...args], {
    env: { ...process.env, SWITCHYARD_URL: proxy.url, SWITCHYARD_ADMIN_TOKEN: ADMIN_TOKEN },
  });
  // `create` shows the new key once, by design; every other output is searched for secrets.
  if (args[0] !== "create") bodies.push(stdout);
  return stdout;
}

/**
 * @param {string} path
 * @param {{ key?: string, body?: unknown, method?: string, signal?: AbortSignal }} [options]
 */
async function send(path, { key, body, method, signal } = {}) {
  const res = await fetch(`${proxy.url}${path}`, {
    method: method ?? (body ? "POST" : "GET"),
    headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal,
  });
  return res;
}

/**
 * @param {Response} res
 * @returns {Promise<Settled>}
 */
async function settle(res) {
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, retryAfter: res.headers.get("retry-after"), text };
}

const chat = (model = "m", stream = false) => ({ model, stream, messages: [{ role: "user", content: "hello" }] });
const count = (/** @type {Settled[]} */ results, /** @type {number} */ status) => results.filter((r) => r.status === status).length;

/**
 * Polls until `check` holds (keys are cached per isolate for a few seconds).
 * @template T
 * @param {() => Promise<T>} check
 * @returns {Promise<T>}
 */
async function eventually(check, ms = 8000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("team keys against wrangler dev", () => {
  /** @type {CreatedKey} */
  let alice;

  it("with no keys, dev serves without keys (any Authorization ignored) and says so on /health", async () => {
    const health = /** @type {{ auth: string, note: string }} */ (await (await fetch(`${proxy.url}/health`)).json());
    assert.equal(health.auth, "open");
    assert.match(health.note, /without keys/);
    assert.match(proxy.logs(), /dev mode serves without keys/);
    assert.equal((await settle(await send("/v1/chat/completions", { body: chat(), key: "sk-anything" }))).status, 200);
  });

  it("npm run keys -- create … --json prints {id, key, name, scopes}; from then on keys are required", async () => {
    alice = JSON.parse(await keys("create", "--name", "alice", "--scopes", "chat,serve", "--models", "m,endless", "--rpm", "60", "--concurrency", "4", "--tokens-per-day", "200000", "--json"));
    secrets.push(alice.key);
    assert.match(alice.id, /^key_/);
    assert.match(alice.key, /^sy-[A-Za-z0-9_-]{43}$/);
    assert.equal(alice.name, "alice");
    assert.deepEqual(alice.scopes, ["chat", "serve"]);
    assert.equal(/** @type {{ auth: string }} */ (await (await fetch(`${proxy.url}/health`)).json()).auth, "keys");
    assert.ok(await eventually(async () => (await settle(await send("/v1/chat/completions", { body: chat() }))).status === 401));
    const ok = await settle(await send("/v1/chat/completions", { body: chat(), key: alice.key }));
    assert.equal(ok.status, 200);
    assert.equal((await settle(await send("/v1/chat/completions", { body: chat("other"), key: alice.key }))).status, 403);
    // A serve key gets a session ticket.
    assert.equal((await settle(await send("/v1/sessions/ticket", { method: "POST", key: alice.key }))).status, 200);
    const list = await keys("list", "--json");
    assert.ok(!list.includes(alice.key));
    assert.equal(JSON.parse(list)[0].name, "alice");
  });

  it("rpm: a burst of 200 lets exactly the limit through", async () => {
    const k = JSON.parse(await keys("create", "--name", "rpm", "--scopes", "chat", "--rpm", "50", "--json"));
    secrets.push(k.key);
    const results = await Promise.all(Array.from({ length: 200 }, () => send("/v1/chat/completions", { body: chat(), key: k.key }).then(settle)));
    const through = count(results, 200);
    console.log(`# rpm 50: ${through} of 200 let through, ${count(results, 429)} × 429`);
    assert.equal(through, 50);
    assert.equal(count(results, 429), 150);
    assert.ok(results.filter((r) => r.status === 429).every((r) => Number(r.retryAfter) > 0));
    assert.ok(results.filter((r) => r.status === 429).every((r) => JSON.parse(r.text).error.code === "rate_limit_exceeded"));
  });

  it("concurrent streams: a burst of 200 endless streams runs exactly the limit; leaving frees the slots", async () => {
    const k = JSON.parse(await keys("create", "--name", "conc", "--scopes", "chat", "--concurrency", "4", "--json"));
    secrets.push(k.key);
    const ctl = new AbortController();
    const responses = await Promise.all(Array.from({ length: 200 }, () => send("/v1/chat/completions", { body: chat("endless", true), key: k.key, signal: ctl.signal })));
    const running = responses.filter((r) => r.status === 200);
    const refused = await Promise.all(responses.filter((r) => r.status !== 200).map(settle));
    console.log(`# concurrency 4: ${running.length} of 200 streams ran, ${count(refused, 429)} × 429`);
    assert.equal(running.length, 4);
    assert.equal(count(refused, 429), 196);
    ctl.abort();
    await Promise.all(running.map((r) => r.body?.cancel().catch(() => {})));
    // Slots are released when the streams end (ctx.waitUntil), so a new one runs.
    const again = await eventually(async () => {
      const r = await send("/v1/chat/completions", { body: chat(), key: k.key });
      await settle(r);
      return r.status === 200;
    });
    assert.ok(again);
  });

  it("tokens per day: once real usage and a request's reservation pass the limit, a burst of 200 lets none through", async () => {
    // Each request reserves its prompt (35 characters: 9 tokens) and its max_tokens (this key's default, 1).
    const k = JSON.parse(await keys("create", "--name", "tpd", "--scopes", "chat", "--tokens-per-day", "15", "--default-max-tokens", "1", "--json"));
    secrets.push(k.key);
    assert.equal((await settle(await send("/v1/chat/completions", { body: chat(), key: k.key }))).status, 200);
    const used = /** @type {Usage} */ (
      await eventually(async () => {
        /** @type {Usage} */
        const u = JSON.parse((await settle(await send("/v1/usage", { key: k.key }))).text);
        return u.totals.requests === 1 ? u : null;
      })
    );
    assert.equal(used.totals.prompt_tokens + used.totals.completion_tokens, 8);
    const results = await Promise.all(Array.from({ length: 200 }, () => send("/v1/chat/completions", { body: chat(), key: k.key }).then(settle)));
    console.log(`# tokens/day 15 (8 used, 10 reserved per request): ${count(results, 200)} of 200 let through`);
    assert.equal(count(results, 200), 0);
    assert.equal(count(results, 429), 200);
  });

  it("usage and revoke through the CLI; a revoked key is refused", async () => {
    /** @type {Array<Usage & { key: { name: string } }>} */
    const usage = JSON.parse(await keys("usage", "--json"));
    const mine = /** @type {(typeof usage)[number]} */ (usage.find((d) => d.key.name === "alice"));
    assert.ok(mine.totals.requests >= 2);
    assert.ok(mine.usage.some((r) => r.model === "m" && r.backend.startsWith("llama:")));
    assert.match(await keys("usage"), /alice/);
    await keys("revoke", alice.id);
    assert.ok(await eventually(async () => (await settle(await send("/v1/chat/completions", { body: chat(), key: alice.key }))).status === 401));
  });

  it("client credentials never reach the upstream", async () => {
    const received = /** @type {Array<{ headers: Record<string, string | undefined> }>} */ (await (await fetch(`${fixtures.url}/_requests`)).json());
    assert.ok(received.length > 0);
    for (const r of received) {
      assert.equal(r.headers.authorization, undefined);
      assert.equal(r.headers["x-api-key"], undefined);
    }
  });

  it("brute force: more than 20 failed authentications a minute from one address → 429, then even a right key", async () => {
    const k = JSON.parse(await keys("create", "--name", "victim", "--scopes", "chat", "--json"));
    secrets.push(k.key);
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => send("/v1/models", { key: `sy-${String(i).padStart(43, "g")}` }).then(settle)));
    console.log(`# brute force: ${count(results, 401)} × 401, ${count(results, 429)} × 429 of 60`);
    assert.ok(count(results, 401) <= 20);
    assert.equal(count(results, 401) + count(results, 429), 60);
    assert.equal((await settle(await send("/v1/models", { key: k.key }))).status, 429);
  });

  it("no key or admin token appears in any log line or response body", () => {
    const haystack = proxy.logs() + "\n" + bodies.join("\n");
    assert.ok(bodies.length > 500);
    const leaked = secrets.map((s, i) => (haystack.includes(s) ? i : -1)).filter((i) => i >= 0);
    assert.deepEqual(leaked, [], "secrets (by index) that appeared in the logs or a response");
  });
});
