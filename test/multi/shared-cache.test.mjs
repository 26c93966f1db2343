// A conversation whose turns land on different doors (test/support/doors.mjs: three wrangler dev
// processes, one set of Durable Objects) keeps its prompt cache: the AdmissionHub grants each turn
// the server its previous turn was granted on, whichever door asks, so the share of its later turns'
// prompt served from llama-server's cache is within 5 % of a conversation kept on one door.
//   node --test test/multi/shared-cache.test.mjs
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startDoors } from "../support/doors.mjs";
import { startLlamaServer } from "../support/llama-server.mjs";
import { grammar } from "../support/switchyard-dev.mjs";

/** @type {import("../support/llama-server.mjs").LlamaServer[]} */
let servers = [];
/** @type {import("../support/doors.mjs").Doors} */
let doors;

before(async () => {
  servers = await Promise.all([0, 1].map(() => startLlamaServer({ parallel: 2, ctx: 8192, args: ["--poll", "0"] })));
  doors = await startDoors(3, {
    vars: {
      SWITCHYARD_CONFIG: {
        models: { chat: { balance: "least-busy", targets: servers.map((s) => ({ kind: "llama", url: s.url })) } },
        health: { sampleMs: 200, snapshotTtlMs: 200 },
      },
    },
  });
});

after(async () => {
  await doors?.stop();
  await Promise.all(servers.map((s) => s.stop()));
});

const words = (/** @type {string} */ seed, /** @type {number} */ n) => `${seed} ${Array.from({ length: n }, (_, i) => `w${(i * 7919) % 1000}`).join(" ")}`;

/**
 * A conversation of `turns` turns, turn t sent to door `door(t)`; returns Σ cached ÷ Σ prompt tokens over turns ≥ 2.
 * @param {string} seed @param {number} turns @param {(t: number) => number} door
 */
async function conversation(seed, turns, door) {
  /** @type {Array<{ role: string, content: string }>} */
  const messages = [{ role: "system", content: words(`${seed}s`, 250) }];
  let cached = 0;
  let prompt = 0;
  for (let t = 0; t < turns; t++) {
    messages.push({ role: "user", content: words(`${seed}t${t}`, 50) });
    const answer = `answer ${t}`;
    const res = await fetch(`${doors.at(door(t))}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "chat", temperature: 0, max_tokens: 16, messages, grammar: grammar(answer) }),
    });
    const body = await res.text();
    assert.equal(res.status, 200, body);
    const usage = JSON.parse(body).usage;
    if (t > 0) {
      prompt += usage.prompt_tokens;
      cached += usage.prompt_tokens_details?.cached_tokens ?? 0;
    }
    messages.push({ role: "assistant", content: answer });
  }
  return cached / prompt;
}

describe("a conversation over three doors", () => {
  it("keeps its prompt cache as well as one on one door (within 5 %)", { timeout: 40_000 }, async () => {
    /** @type {number[]} */
    const one = [];
    /** @type {number[]} */
    const three = [];
    for (let k = 0; k < 3; k++) {
      one.push(await conversation(`one${k}x${Date.now()}`, 4, () => 0));
      three.push(await conversation(`three${k}x${Date.now()}`, 4, (t) => t + k));
    }
    const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(`reuse, one door: ${one.map((x) => x.toFixed(3)).join(" ")}; three doors: ${three.map((x) => x.toFixed(3)).join(" ")}`);
    assert.ok(mean(one) > 0.5, `one door reused ${mean(one)}`);
    assert.ok(mean(three) >= mean(one) - 0.05, `three doors ${mean(three)} vs one door ${mean(one)}`);
  });
});
