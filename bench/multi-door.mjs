#!/usr/bin/env node
// One door against three doors, side by side in one run (docs/benchmarks.md, "Many isolates, one
// pool"). A door is a `wrangler dev` process running the Worker (its own isolate and module state);
// three doors share one set of Durable Objects (test/support/doors.mjs). Setups, each with fresh
// llama-servers (two: 1 and 2 slots, -t 1 --poll 0 --metrics, the tiny test model) and fresh doors,
// clients sending every request to a door at random:
//   one door         queue.shared on (the AdmissionHub grants), one isolate
//   three doors      queue.shared on
//   three, isolate   queue.shared false: each door's own line, as before the hub (the comparison)
// Per setup:
//   over-subscription  the share of /slots samples (every 20 ms, with /metrics) in which a server held
//                      more of our requests than its slots: llama-server queued one inside
//                      (llamacpp:requests_deferred > 0), over R rounds of the burst below
//   fairness           a burst of 20 from key a, then one request each from b and c 50 ms later: a's share
//                      of the first 6 answers to finish (3 slots: with keys in turn b and c are among them),
//                      and where b's and c's finished (of 22)
//   reuse              K conversations × T turns (a 150-word system prompt of their own, 25 words a
//                      turn), every turn at a random door, least-busy placement: Σ cached_tokens ÷ Σ
//                      prompt_tokens over turns ≥ 2
//   latency            40 requests one at a time (nothing waits): p50/p99 end to end, request to answer,
//                      and the share of them that started on a credit (no call to the hub before the
//                      start; the doors' /metrics); then again with room to spare (one llama-server with
//                      8 slots), three doors with and without the shared line: what the line adds there
// and, once, the AdmissionHub alone in workerd (bench/multi-door/hub-ceiling.mjs): an ask + end pair's
// p50/p99 at concurrency 1 (what coordination adds to a request that finds a slot free, the object
// in the same location) and the pairs per second one object sustains.
//
//   node bench/multi-door.mjs [--rounds 3] [--conversations 4] [--turns 4] [--write]
// About 4 minutes on 2 shared cores. --write replaces the block between the multi-door markers in
// docs/benchmarks.md.
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createKeyAtDoors, startDoors, watchSlots } from "../test/support/doors.mjs";
import { startLlamaServer } from "../test/support/llama-server.mjs";
import { grammar } from "../test/support/switchyard-dev.mjs";
import { hubCeiling } from "./multi-door/hub-ceiling.mjs";

const ROOT = resolve(import.meta.dirname, "..");
const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    conversations: { type: "string", default: "4" },
    turns: { type: "string", default: "4" },
    write: { type: "boolean", default: false },
  },
});
const ROUNDS = Number(flags.rounds);
const CONVERSATIONS = Number(flags.conversations);
const TURNS = Number(flags.turns);

/** @typedef {{ name: string, doors: number, shared: boolean, roomy?: boolean }} Setup */
/** @type {Setup[]} */
const SETUPS = [
  { name: "one door", doors: 1, shared: true },
  { name: "three doors", doors: 3, shared: true },
  { name: "three doors, isolate lines", doors: 3, shared: false },
];
/** Room to spare: one llama-server with 8 slots, only the latency phase (where credits take the call off a request's path). */
const ROOMY_SLOTS = 8;
/** @type {Setup[]} */
const ROOMY = [
  { name: "three doors", doors: 3, shared: true, roomy: true },
  { name: "three doors, isolate lines", doors: 3, shared: false, roomy: true },
];

const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const words = (/** @type {string} */ seed, /** @type {number} */ n) => `${seed} ${Array.from({ length: n }, (_, i) => `w${(i * 7919) % 1000}`).join(" ")}`;
const quantile = (/** @type {number[]} */ xs, /** @type {number} */ p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
};

/** @param {Setup} setup */
async function runSetup(setup) {
  const servers = await Promise.all((setup.roomy ? [ROOMY_SLOTS] : [1, 2]).map((parallel) => startLlamaServer({ parallel, ctx: 4096 * parallel, args: ["--poll", "0", "--metrics"] })));
  const ADMIN_TOKEN = `adm-${randomBytes(24).toString("base64url")}`;
  const doors = await startDoors(setup.doors, {
    vars: {
      ADMIN_TOKEN,
      KEY_STORE_NAME: `bench-${randomBytes(6).toString("hex")}`,
      SWITCHYARD_CONFIG: {
        models: { one: { balance: "least-busy", targets: servers.map((s) => ({ kind: "llama", url: s.url })) } },
        health: { sampleMs: 200, snapshotTtlMs: 200 },
        queue: { maxWaitMs: 60_000, shared: setup.shared },
      },
    },
  });
  try {
    const keys = [];
    for (const name of ["a", "b", "c"]) keys.push((await createKeyAtDoors(doors, ADMIN_TOKEN, { name })).key);
    const [a, b, c] = /** @type {[string, string, string]} */ (keys);
    /** @returns {Promise<{ usage: { prompt_tokens: number, prompt_tokens_details?: { cached_tokens?: number } }, content: string }>} */
    const chat = async (/** @type {string} */ key, /** @type {unknown[]} */ messages, /** @type {string} */ text) => {
      const res = await fetch(`${doors.any()}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "one", temperature: 0, max_tokens: 64, messages, grammar: grammar(text) }),
      });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${setup.name}: ${res.status} ${body}`);
      const j = JSON.parse(body);
      return { usage: j.usage, content: j.choices[0].message.content };
    };
    const ask = (/** @type {string} */ key, /** @type {string} */ text) => chat(key, [{ role: "user", content: "go" }], `${text} ${"z ".repeat(20)}`);
    // Slot counts reach every door (its /props read, the hub's sample).
    await Promise.all(Array.from({ length: 9 }, (_, i) => ask(a, `warm${i}`)));
    await sleep(600);

    if (setup.roomy) {
      const lat = await latency(setup, doors.urls, ADMIN_TOKEN, () => ask(b, `l${Math.random()}`), 100);
      return { name: setup.name, overShare: NaN, samples: 0, aShareFirst6: NaN, singlesAt: /** @type {number[]} */ ([]), reuse: NaN, ...lat };
    }

    // Over-subscription and fairness.
    let over = 0;
    let samples = 0;
    let aFirst = 0;
    /** @type {number[]} */
    const singles = [];
    for (let r = 0; r < ROUNDS; r++) {
      const watch = watchSlots(servers.map((s) => s.url));
      /** @type {string[]} */
      const done = [];
      const burst = Array.from({ length: 20 }, (_, i) => ask(a, `a${r}x${i}`).then(() => done.push("a")));
      await sleep(50);
      const others = [ask(b, `b${r}`).then(() => done.push("b")), ask(c, `c${r}`).then(() => done.push("c"))];
      await Promise.all([...burst, ...others]);
      const seen = await watch.stop();
      for (const w of Object.values(seen)) {
        over += w.over;
        samples += w.samples;
      }
      aFirst += done.slice(0, 6).filter((k) => k === "a").length;
      singles.push(done.indexOf("b") + 1, done.indexOf("c") + 1);
      await sleep(300);
    }

    // Reuse: every turn at a random door.
    let cached = 0;
    let prompt = 0;
    for (let k = 0; k < CONVERSATIONS; k++) {
      const seed = `${setup.name.replace(/\W/g, "")}${k}${randomBytes(3).toString("hex")}`;
      /** @type {Array<{ role: string, content: string }>} */
      const messages = [{ role: "system", content: words(`${seed}s`, 150) }];
      for (let t = 0; t < TURNS; t++) {
        messages.push({ role: "user", content: words(`${seed}t${t}`, 25) });
        const answer = `answer ${t} ${seed}`;
        const { usage } = await chat(a, messages, answer);
        if (t > 0) {
          prompt += usage.prompt_tokens;
          cached += usage.prompt_tokens_details?.cached_tokens ?? 0;
        }
        messages.push({ role: "assistant", content: answer });
      }
    }

    const lat = await latency(setup, doors.urls, ADMIN_TOKEN, () => ask(b, `l${Math.random()}`));
    return {
      name: setup.name,
      overShare: samples ? over / samples : NaN,
      samples,
      aShareFirst6: aFirst / (6 * ROUNDS),
      singlesAt: singles,
      reuse: prompt ? cached / prompt : NaN,
      ...lat,
    };
  } finally {
    await doors.stop();
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/**
 * `n` requests one at a time (nothing waits): their p50/p99 and the share that started on a credit.
 * @param {Setup} setup @param {string[]} urls @param {string} token @param {() => Promise<unknown>} one
 */
async function latency(setup, urls, token, one, n = 40) {
  /** @type {number[]} */
  const lat = [];
  const before = await sharedCounts(urls, token);
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await one();
    lat.push(performance.now() - t);
  }
  const after = await sharedCounts(urls, token);
  const delta = (/** @type {string} */ k) => (after[k] ?? 0) - (before[k] ?? 0);
  const admitted = delta("credited") + delta("granted") + delta("queued") + delta("fallback");
  return { p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), credited: setup.shared && admitted ? delta("credited") / admitted : NaN };
}

/**
 * The doors' tallies of admissions through the shared line (/metrics, switchyard_admission_shared_total), summed.
 * @param {string[]} urls @param {string} token @returns {Promise<Record<string, number>>}
 */
async function sharedCounts(urls, token) {
  /** @type {Record<string, number>} */
  const sum = {};
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    for (const m of text.matchAll(/^switchyard_admission_shared_total\{outcome="(\w+)"\} (\d+)$/gm)) sum[m[1]] = (sum[m[1]] ?? 0) + Number(m[2]);
  }
  return sum;
}

const started = Date.now();
const rows = [];
for (const s of SETUPS) {
  const row = await runSetup(s);
  console.log(JSON.stringify(row));
  rows.push(row);
}
const roomy = [];
for (const s of ROOMY) {
  const row = await runSetup(s);
  console.log(JSON.stringify(row));
  roomy.push(row);
}
const hub = await hubCeiling({ n: 4000, concurrency: [1, 16, 64] });
for (const h of hub) console.log(JSON.stringify(h));

const pct = (/** @type {number} */ x) => `${(x * 100).toFixed(1)} %`;
const table = [
  "| setup | over-subscription (share of samples) | burst key's share of the first 6 answers | b's and c's places (of 22) | reuse, turns ≥ 2 | request p50 / p99, nothing waiting | of those, started on a credit |",
  "|---|---|---|---|---|---|---|",
  ...rows.map((r) => `| ${r.name} | ${pct(r.overShare)} (${r.samples} samples) | ${pct(r.aShareFirst6)} | ${r.singlesAt.join(", ")} | ${pct(r.reuse)} | ${r.p50.toFixed(0)} / ${r.p99.toFixed(0)} ms | ${Number.isNaN(r.credited) ? "—" : pct(r.credited)} |`),
  "",
  `| room to spare: one llama-server with ${ROOMY_SLOTS} slots, 100 requests one at a time | request p50 / p99 | started on a credit |`,
  "|---|---|---|",
  ...roomy.map((r) => `| ${r.name} | ${r.p50.toFixed(1)} / ${r.p99.toFixed(1)} ms | ${Number.isNaN(r.credited) ? "—" : pct(r.credited)} |`),
  "",
  "| AdmissionHub alone in workerd | ask + end pairs per second | pair p50 | pair p99 |",
  "|---|---|---|---|",
  ...hub.map((h) => `| concurrency ${h.c} | ${Math.round(h.pairsPerSecond)} | ${h.p50.toFixed(2)} ms | ${h.p99.toFixed(2)} ms |`),
];
const block = [
  `<!-- multi-door:start (written by bench/multi-door.mjs --write) -->`,
  `Measured ${new Date().toISOString().slice(0, 10)} with \`node bench/multi-door.mjs --rounds ${ROUNDS} --conversations ${CONVERSATIONS} --turns ${TURNS} --write\` (${Math.round((Date.now() - started) / 1000)} s):`,
  "",
  ...table,
  `<!-- multi-door:end -->`,
].join("\n");
console.log(block);
if (flags.write) {
  const path = join(ROOT, "docs/benchmarks.md");
  const doc = readFileSync(path, "utf8");
  const from = doc.indexOf("<!-- multi-door:start");
  const to = doc.indexOf("<!-- multi-door:end -->");
  if (from < 0 || to < 0) throw new Error("docs/benchmarks.md has no multi-door markers");
  writeFileSync(path, doc.slice(0, from) + block + doc.slice(to + "<!-- multi-door:end -->".length));
}
