// Three doors (separate wrangler dev processes, one set of Durable Objects: test/support/doors.mjs)
// before two real llama-servers (1 and 2 slots, -t 1 --poll 0, the tiny test model), clients
// sending to a door at random: admission shared through the AdmissionHub keeps every server at its
// slots (llama-server never queues one of our requests inside: its /metrics requests_deferred stays
// 0 while /slots is sampled), and a burst of 20 from one key does not hold back single requests
// from two others (docs/architecture.md, "Admission queue").
//   node --test test/multi/shared-admission.test.mjs
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createKeyAtDoors, startDoors, watchSlots } from "../support/doors.mjs";
import { startLlamaServer } from "../support/llama-server.mjs";
import { grammar } from "../support/switchyard-dev.mjs";

const ADMIN_TOKEN = `adm-${randomBytes(24).toString("base64url")}`;
/** @type {import("../support/llama-server.mjs").LlamaServer[]} */
let servers = [];
/** @type {import("../support/doors.mjs").Doors} */
let doors;

before(async () => {
  servers = await Promise.all([1, 2].map((parallel) => startLlamaServer({ parallel, ctx: 1024 * parallel, args: ["--poll", "0", "--metrics"] })));
  doors = await startDoors(3, {
    vars: {
      ADMIN_TOKEN,
      KEY_STORE_NAME: `multi-q-${randomBytes(6).toString("hex")}`,
      SWITCHYARD_CONFIG: {
        models: { one: { targets: servers.map((s) => ({ kind: "llama", url: s.url })) } },
        health: { sampleMs: 200, snapshotTtlMs: 200 },
        queue: { maxWaitMs: 60_000, shared: true },
      },
    },
  });
});

after(async () => {
  await doors?.stop();
  await Promise.all(servers.map((s) => s.stop()));
});

/** One request at a random door answered with exactly `text` and ~150 tokens more (~100 ms of generation here alone). */
async function ask(/** @type {string} */ key, /** @type {string} */ text) {
  const res = await fetch(`${doors.any()}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "one", temperature: 0, max_tokens: 400, messages: [{ role: "user", content: "go" }], grammar: grammar(`${text} ${"z ".repeat(150)}`) }),
  });
  const body = await res.text();
  assert.equal(res.status, 200, body);
  return text;
}

describe("admission shared by three doors before two real llama-servers", () => {
  it("no server ever holds more of the requests than its slots; a burst of 20 from one key does not hold back two others", { timeout: 50_000 }, async () => {
    const [a, b, c] = await Promise.all(["a", "b", "c"].map((name) => createKeyAtDoors(doors, ADMIN_TOKEN, { name })));
    // Each server's slot count reaches the doors with their first requests (their /props read, the hub's sample).
    await Promise.all(Array.from({ length: 6 }, (_, i) => ask(/** @type {{ key: string }} */ (a).key, `warm${i}`)));
    await new Promise((r) => setTimeout(r, 600));
    const watch = watchSlots(servers.map((s) => s.url));
    /** @type {string[]} */
    const done = [];
    const burst = Array.from({ length: 20 }, (_, i) => ask(/** @type {{ key: string }} */ (a).key, `a${i}`).then((t) => done.push(t)));
    await new Promise((r) => setTimeout(r, 50));
    const singles = [ask(/** @type {{ key: string }} */ (b).key, "b0"), ask(/** @type {{ key: string }} */ (c).key, "c0")].map((p) => p.then((t) => done.push(t)));
    await Promise.all([...burst, ...singles]);
    const seen = await watch.stop();
    console.log(`completed: ${done.join(" ")}; slots seen: ${JSON.stringify(seen)}`);
    for (const [url, w] of Object.entries(seen)) {
      assert.ok(w.samples > 20, `${url}: ${w.samples} samples`);
      assert.equal(w.over, 0, `${url} queued one of our requests inside in ${w.over} of ${w.samples} samples`);
    }
    // Three slots in all: b's and c's single requests start within a round of turns, long before the burst is through.
    for (const single of ["b0", "c0"]) assert.ok(done.indexOf(single) < 10, `${single} finished at ${done.indexOf(single)}: ${done.join(" ")}`);
  });
});
