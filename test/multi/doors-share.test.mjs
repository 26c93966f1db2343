// The multi-door bed itself (test/support/doors.mjs): three `wrangler dev` processes running the same
// Worker, the first owning the Durable Objects and the others bound to them with `script_name`,
// share one instance of each object. Proven with the key gate, whose counts live in one: a key with
// `rpm: 30` sent 60 requests at once, spread over the three doors, gets exactly 30 through (three
// instances would let up to 90 through), and usage counts all 60 attempts' successes in one place;
// a key's `tokensPerDay` reservations, held while requests run, admit across the doors exactly what
// fits the day, and what they used is charged in one place. With the shared line (as deployed) and
// room to spare on the server, requests start on the credits the AdmissionHub gives each door,
// without a call to it first.
//   node --test test/multi/doors-share.test.mjs
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { startDoors } from "../support/doors.mjs";
import { startFixtureUpstream } from "../support/fixture-upstream.mjs";

const ADMIN_TOKEN = `adm-${randomBytes(24).toString("base64url")}`;
/** @type {Awaited<ReturnType<typeof startFixtureUpstream>>} */
let fixtures;
/** @type {import("../support/doors.mjs").Doors} */
let doors;

before(async () => {
  fixtures = await startFixtureUpstream();
  doors = await startDoors(3, {
    vars: {
      ADMIN_TOKEN,
      KEY_STORE_NAME: `multi-${randomBytes(6).toString("hex")}`,
      SWITCHYARD_CONFIG: {
        models: {
          m: { targets: [{ kind: "llama", url: `${fixtures.url}/u-share${Date.now()}/slots-64/behave/say/hi` }] },
          // 100 tokens over 2 s (20 ms apart), its usage 3 + 100: requests that overlap.
          slow: { targets: [{ kind: "llama", url: `${fixtures.url}/u-slow${Date.now()}/slots-64/behave/paced/100` }] },
        },
        // As deployed (the default there; `npm start`'s one isolate keeps its own line).
        queue: { shared: true },
      },
    },
  });
});

after(async () => {
  await doors?.stop();
  await fixtures?.close();
});

describe("three doors, one set of Durable Objects", () => {
  it("a key's rpm holds across the doors: 60 requests at once, exactly 30 served", { timeout: 60_000 }, async () => {
    const res = await fetch(`${doors.at(1)}/v1/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "rpm30", scopes: ["chat"], limits: { rpm: 30 } }),
    });
    assert.equal(res.status, 201, await res.clone().text());
    const { key, id } = /** @type {{ key: string, id: string }} */ (await res.json());
    // Made at door 1, known at every door: one key store. A door that had cached "no keys yet"
    // (open dev mode, key-directory.ts CACHE_MS) serves keyless requests until its cache expires: wait
    // until every door refuses one.
    for (const url of doors.urls) {
      for (;;) {
        const r = await fetch(`${url}/v1/models`);
        await r.arrayBuffer();
        if (r.status === 401) break;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        fetch(`${doors.at(i)}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "m", messages: [{ role: "user", content: `n${i}` }] }),
        }).then(async (r) => (await r.arrayBuffer(), r.status)),
      ),
    );
    const ok = statuses.filter((s) => s === 200).length;
    const limited = statuses.filter((s) => s === 429).length;
    assert.equal(ok, 30, statuses.join(","));
    assert.equal(limited, 30, statuses.join(","));
    const usage = await fetch(`${doors.at(2)}/v1/admin/usage?key=${id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const text = await usage.text();
    assert.equal(usage.status, 200, text);
    assert.match(text, /"requests":30\b/, text);
  });

  it("a key's tokensPerDay holds across the doors: 30 requests at once run exactly as many as their reservations fit, and the day is charged in one place", { timeout: 60_000 }, async () => {
    const LIMIT = 1000;
    const res = await fetch(`${doors.at(0)}/v1/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "day1000", scopes: ["chat"], limits: { tokensPerDay: LIMIT } }),
    });
    assert.equal(res.status, 201, await res.clone().text());
    const { key, id } = /** @type {{ key: string, id: string }} */ (await res.json());
    // Each reserves its prompt (estimated) and max_tokens 100 for each generation it may run while it
    // runs (2 s here); the refusals name that reservation. Whichever door each arrives at, exactly
    // floor(1000 / reservation) run at once; three gates (one per door) would let three times as many.
    const send = (/** @type {number} */ i) =>
      fetch(`${doors.at(i)}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "slow", max_tokens: 100, messages: [{ role: "user", content: `n${i % 10}` }] }),
      }).then(async (r) => ({ status: r.status, body: await r.text() }));
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => send(i)));
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    const table = answers.map((a) => `${a.status} ${a.body.slice(0, 140)}`).join("\n");
    assert.equal(ok.length + refused.length, 30, table);
    for (const r of refused) assert.match(r.body, /tokens_per_day_exceeded/, r.body);
    const reservation = Math.max(...refused.map((r) => Number(/may use up to (\d+) tokens/.exec(r.body)?.[1])));
    assert.ok(reservation > 100 && reservation < 400, table);
    assert.equal(ok.length, Math.floor(LIMIT / reservation), table);
    // Charged what they used (the upstream's count: 3 + 100 each), in one place; then one request at a
    // time, door after door, runs while a reservation fits what is left, and not once more.
    let used = ok.length * 103;
    let runs = 0;
    while (used + reservation <= LIMIT) {
      const r = await send(runs);
      assert.equal(r.status, 200, r.body);
      used += 103;
      runs++;
    }
    const last = await send(runs);
    assert.equal(last.status, 429, last.body);
    assert.match(last.body, /tokens_per_day_exceeded/);
    const usage = await fetch(`${doors.at(1)}/v1/admin/usage?key=${id}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const text = await usage.text();
    assert.equal(usage.status, 200, text);
    assert.match(text, new RegExp(`"requests":${ok.length + runs}\\b`), text);
    assert.match(text, new RegExp(`"completion_tokens":${(ok.length + runs) * 100}\\b`), text);
  });

  it("with room to spare, a door's requests start on its credits: no call to the AdmissionHub before they start", { timeout: 60_000 }, async () => {
    /** The doors' tallies of admissions through the shared line (/metrics), summed. */
    const tallies = async () => {
      /** @type {Record<string, number>} */
      const sum = {};
      for (const url of doors.urls) {
        const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
        for (const m of text.matchAll(/^switchyard_admission_shared_total\{outcome="(\w+)"\} (\d+)$/gm)) sum[/** @type {string} */ (m[1])] = (sum[/** @type {string} */ (m[1])] ?? 0) + Number(m[2]);
      }
      return sum;
    };
    const res = await fetch(`${doors.at(0)}/v1/admin/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "credits", scopes: ["chat"] }),
    });
    const { key } = /** @type {{ key: string }} */ (await res.json());
    const before = await tallies();
    for (let i = 0; i < 30; i++) {
      const r = await fetch(`${doors.any()}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "one at a time" }] }),
      });
      assert.equal(r.status, 200, await r.text());
    }
    const after = await tallies();
    const delta = (/** @type {string} */ k) => (after[k] ?? 0) - (before[k] ?? 0);
    const line = `credited ${delta("credited")}, granted ${delta("granted")}, queued ${delta("queued")}, fallback ${delta("fallback")}`;
    console.log(line);
    assert.equal(delta("credited") + delta("granted") + delta("queued") + delta("fallback"), 30, line);
    // A door's first request asks (and brings back a credit); the rest start on one.
    assert.ok(delta("credited") >= 20, line);
    assert.equal(delta("fallback"), 0, line);
  });
});
