// The admission queue in front of a real llama-server with one slot (`--parallel 1`), through
// `wrangler dev` with three team keys made by the admin API: a burst of 3 keys × 20 requests, a's
// twenty sent first, is served in fair order (keys in turn), not first come first served. Each answer
// is forced by a one-literal grammar to name its key and number, and llama-server answers one at a
// time, so the order the answers complete in is the order they were served. Figures:
// docs/reliability.md ("Admission queue").
//   node --test test/e2e/admission-llama.test.mjs
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { startLlamaServer } from "../support/llama-server.mjs";
import { grammar, startSwitchyard, createChatKey } from "../support/switchyard-dev.mjs";

const ADMIN_TOKEN = `adm-${randomBytes(24).toString("base64url")}`;
/** @type {import("../support/llama-server.mjs").LlamaServer} */
let llama;
/** @type {import("../support/switchyard-dev.mjs").Switchyard} */
let proxy;

before(async () => {
  llama = await startLlamaServer({ parallel: 1 });
  proxy = await startSwitchyard({
    vars: {
      ADMIN_TOKEN,
      KEY_STORE_NAME: `e2e-q-${randomBytes(6).toString("hex")}`,
      SWITCHYARD_CONFIG: {
        models: { one: { targets: [{ kind: "llama", url: llama.url }] } },
        // The hub samples /slots every 200 ms, so the slot count is known soon after the first request.
        health: { sampleMs: 200, snapshotTtlMs: 200 },
        queue: { maxWaitMs: 120_000 },
      },
    },
  });
});

after(async () => {
  await proxy?.stop();
  await llama?.stop();
});

/** @param {string} name */
const createKey = (name) => createChatKey(proxy.url, ADMIN_TOKEN, name);

/**
 * What every answer ends with: ~100 tokens, ~70 ms of generation here alone, so that the burst is
 * still in line when the other keys' requests arrive (a bare name would be written in milliseconds).
 */
const PAD = " z".repeat(100);

/** One request answered with exactly `text` (and PAD); resolves with the text once the answer is complete. */
async function ask(/** @type {string} */ key, /** @type {string} */ text, stream = false) {
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "one", stream, temperature: 0, max_tokens: 400, messages: [{ role: "user", content: "go" }], grammar: grammar(text + PAD) }),
  });
  const body = await res.text();
  assert.equal(res.status, 200, body);
  if (stream) {
    assert.match(body, /data: \[DONE\]/);
    return text;
  }
  const content = /** @type {{ choices: Array<{ message: { content: string } }> }} */ (JSON.parse(body)).choices[0]?.message.content;
  return content?.endsWith(PAD) ? content.slice(0, -PAD.length) : content;
}

describe("admission queue before a real one-slot llama-server", () => {
  it("3 keys × 20 requests, a's first: served with the keys in turn", { timeout: 180_000 }, async () => {
    const names = ["a", "b", "c"];
    const keys = await Promise.all(names.map(createKey));
    // Each key once (its record is then cached), and time for the hub to sample the one slot.
    for (const key of keys) assert.equal(await ask(key, "warm-up"), "warm-up");
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await ask(/** @type {string} */ (keys[0]), "warm-up"), "warm-up");
    await new Promise((r) => setTimeout(r, 500));

    /** @type {string[]} */
    const order = [];
    const started = Date.now();
    const all = keys.flatMap((key, k) =>
      Array.from({ length: 20 }, (_, i) =>
        ask(key, `${names[k]}${i}`, i % 2 === 1).then((text) => {
          assert.equal(text, `${names[k]}${i}`);
          order.push(/** @type {string} */ (names[k]));
        }),
      ),
    );
    await Promise.all(all);
    const line = order.join("");
    console.log(`served in ${Date.now() - started} ms: ${line}`);
    assert.equal(order.length, 60);
    // Round-robin: in the first 30 served each key has about a third (10 if perfect); first come
    // first served would give a all of the first 20.
    for (const name of names) assert.ok(order.slice(0, 30).filter((k) => k === name).length >= 8, line);
    assert.ok(order.slice(0, 20).filter((k) => k === "a").length <= 10, line);
  });
});
