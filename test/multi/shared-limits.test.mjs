// Limits that must hold whichever door a request lands on (test/support/doors.mjs: three wrangler dev
// processes, one set of Durable Objects), before one real one-slot llama-server: a second request at
// another door waits for the slot the first holds and is refused with 503 no_capacity once
// queue.maxWaitMs is over, without reaching the server; a key with `concurrency: 1` gets 429 for a
// second request at another door while its first runs.
//   node --test test/multi/shared-limits.test.mjs
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createKeyAtDoors, startDoors, watchSlots } from "../support/doors.mjs";
import { startLlamaServer } from "../support/llama-server.mjs";
import { grammar } from "../support/switchyard-dev.mjs";

const ADMIN_TOKEN = `adm-${randomBytes(24).toString("base64url")}`;
const MAX_WAIT_MS = 1500;
/** Words of the answer that holds the slot (~2,400 tokens): ~3.3 s of generation here alone, well past MAX_WAIT_MS. */
const HOLD = 1500;
/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {import("../support/doors.mjs").Doors} */
let doors;

before(async () => {
  llama = await startLlamaServer({ parallel: 1, ctx: 4096, args: ["--poll", "0", "--metrics"] });
  doors = await startDoors(3, {
    vars: {
      ADMIN_TOKEN,
      KEY_STORE_NAME: `multi-l-${randomBytes(6).toString("hex")}`,
      SWITCHYARD_CONFIG: {
        models: { one: { targets: [{ kind: "llama", url: llama.url }] } },
        health: { sampleMs: 200, snapshotTtlMs: 200 },
        queue: { maxWaitMs: MAX_WAIT_MS, shared: true },
        // The refusal is a 503 with Retry-After while the response is not committed yet.
        timeouts: { commitMs: 10_000 },
      },
    },
  });
});

after(async () => {
  await doors?.stop();
  await llama?.stop();
});

/** A request at door `door` answered with `words` words of exactly `text`. */
function ask(/** @type {number} */ door, /** @type {string} */ key, /** @type {string} */ text, words = 1) {
  return fetch(`${doors.at(door)}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "one", temperature: 0, max_tokens: words * 2 + 8, messages: [{ role: "user", content: "go" }], grammar: grammar(`${text}${" z".repeat(words)}`) }),
  });
}

describe("limits across three doors", () => {
  it("a one-slot server with queue.maxWaitMs: the second request, at another door, waits and is refused without reaching the server", { timeout: 40_000 }, async () => {
    const { key } = await createKeyAtDoors(doors, ADMIN_TOKEN, { name: "slot" });
    // The slot count is read at the first request (each door's /props read, the hub's sample).
    for (let d = 0; d < 3; d++) assert.equal((await ask(d, key, "warm")).status, 200);
    const watch = watchSlots([llama.url]);
    const first = ask(0, key, "hold", HOLD);
    // The first has the slot (it is generating) before the second arrives.
    for (let t = Date.now(); Date.now() - t < 5000; ) {
      const slots = /** @type {Array<{ is_processing: boolean }>} */ (await (await fetch(`${llama.url}/slots`)).json());
      if (slots.some((s) => s.is_processing)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const sent = Date.now();
    const second = await ask(1, key, "second");
    const waited = Date.now() - sent;
    const body = await second.text();
    const firstRes = await first;
    const firstBody = await firstRes.text();
    const seen = await watch.stop();
    console.log(`second after ${waited} ms: ${second.status} ${body}; first: ${firstRes.status}; slots: ${JSON.stringify(seen)}`);
    assert.equal(firstRes.status, 200, firstBody);
    assert.equal(second.status, 503, body);
    assert.match(body, /no_capacity/);
    assert.ok(second.headers.get("retry-after"), "Retry-After");
    assert.ok(waited >= MAX_WAIT_MS - 100 && waited < MAX_WAIT_MS + 3000, `waited ${waited} ms`);
    for (const w of Object.values(seen)) assert.equal(w.over, 0, `the server queued a request inside in ${w.over} of ${w.samples} samples`);
  });

  it("a key with concurrency: 1 gets 429 for a second request at another door while its first runs", { timeout: 30_000 }, async () => {
    const { key } = await createKeyAtDoors(doors, ADMIN_TOKEN, { name: "one-at-a-time", limits: { concurrency: 1 } });
    const first = ask(2, key, "long", HOLD);
    for (let t = Date.now(); Date.now() - t < 5000; ) {
      const slots = /** @type {Array<{ is_processing: boolean }>} */ (await (await fetch(`${llama.url}/slots`)).json());
      if (slots.some((s) => s.is_processing)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const statuses = await Promise.all([0, 1].map(async (d) => {
      const r = await ask(d, key, "again");
      return `${r.status} ${await r.text()}`;
    }));
    const firstRes = await first;
    assert.equal(firstRes.status, 200, await firstRes.text());
    for (const s of statuses) assert.match(s, /^429 .*concurrency/, s);
    // Once the first is over, the key may run again at any door.
    assert.equal((await ask(1, key, "after")).status, 200);
  });
});
