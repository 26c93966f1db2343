// The multi-door bed itself (test/support/doors.mjs): three `wrangler dev` processes running the same
// Worker, the first owning the Durable Objects and the others bound to them with `script_name`,
// share one instance of each object. Proven with the key gate, whose counts live in one: a key with
// `rpm: 30` sent 60 requests at once, spread over the three doors, gets exactly 30 through (three
// instances would let up to 90 through), and usage counts all 60 attempts' successes in one place.
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
      SWITCHYARD_CONFIG: { models: { m: { targets: [{ kind: "llama", url: `${fixtures.url}/u-share${Date.now()}/slots-64/behave/say/hi` }] } } },
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
});
