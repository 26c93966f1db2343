#!/usr/bin/env node
// Where Switchyard's own cost on a non-stream request goes. bench/overhead/decompose-entry.ts puts the
// whole app and handlers that each add one layer of its work (bare pass-through → gathering a stream
// in JS → request validation → Switchyard's parser → its upstream request → its adapter → routing and
// the responder → the route in a bare Hono app → the app with its middleware) in one Worker, against
// the fast upstream (bench/overhead/upstream.mjs). Every round calls the upstream directly and every
// layer once, in a new shuffled order; the table gives each layer's cost and what it adds over the
// layer before. Three ways to run it:
// - default: all layers in one isolate (one Miniflare), added latency p50;
// - --cpu: the same isolate, workerd CPU per request instead (batches of requests to one layer; the
//   process's CPU time per batch, Linux only), which the latency's scheduling noise does not drown;
// - --processes: each layer in a workerd of its own, one request to each in turn, as `npm run bench`
//   runs its paths: added latency p50 and CPU per request (median). A process that sat idle while the
//   others ran pays more for the same code than a warm isolate does, and this shows which layers.
//   npx node bench/overhead/decompose.mjs [--rounds 600] [--upstream fast|paced-<ms>|llama] [--cpu [--batch 20] | --processes]
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { pct, post } from "./client.mjs";
import { bundleEntry, miniflareSwitchyard } from "./runtimes.mjs";
import { startBenchUpstream } from "./upstream.mjs";
import { cpuNs, workerdPids } from "./workerd-cpu.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const { values: flags } = parseArgs({
  options: {
    rounds: { type: "string", default: "600" },
    upstream: { type: "string", default: "fast" },
    cpu: { type: "boolean", default: false },
    batch: { type: "string", default: "20" },
    processes: { type: "boolean", default: false },
  },
});
const ROUNDS = Number(flags.rounds);
// `fast`: the 16-token answer in one write; `paced-<ms>`: 20 tokens, each frame its own write <ms>
// apart, as llama-server writes them (each one a chunk the Worker reads); `llama`: the real
// llama-server with the tiny test model (max_tokens 4, as in `npm run bench`).
const UPSTREAM = flags.upstream;
const MODE = flags.processes ? "processes" : flags.cpu ? "cpu" : "latency";
const BATCH = MODE === "cpu" ? Number(flags.batch) : 1;
/** @type {Array<[string, string]>} */
const LAYERS = [
  ["native", "bare pass-through (the upstream's non-stream answer, piped)"],
  ["gather", "+ parse the request, ask for a stream, gather it in JS"],
  ["validate", "+ Switchyard's request reading and validation"],
  ["parse", "+ llama-server's request body, Switchyard's SSE parser and aggregator"],
  ["post", "+ the upstream request as the adapter sends it (headers, abort signal, deadline)"],
  ["adapter", "+ the adapter and EventReader (events one at a time, with timeouts)"],
  ["route", "+ routing (targets, health, failover) and the non-stream responder"],
  ["hono", "+ the route as a handler of a Hono app (no middleware but the request id)"],
  ["app", "+ Switchyard's middleware (request id, CORS, authentication): the app as deployed"],
];

const bundle = await bundleEntry(join(ROOT, "bench/overhead/decompose-entry.ts"));
const LLAMA = UPSTREAM === "llama";
/** The upstream the layers call: the base URL of its behaviour, and how to stop it. */
const up = LLAMA
  ? await (await import("../../test/support/llama-server.mjs")).startLlamaServer({ parallel: 4, ctx: 4096 }).then((s) => ({ base: s.url, stop: () => s.stop() }))
  : await startBenchUpstream().then((s) => ({ base: `http://127.0.0.1:${s.port}/${UPSTREAM}`, stop: () => s.close() }));
const FAST = up.base;
const EXTRA = LLAMA ? { max_tokens: 4, temperature: 0 } : {};
// The paced upstream streams whatever it is asked: the non-stream alternative needs another one.
const whole = UPSTREAM === "fast" || LLAMA;
const names = ["direct", ...LAYERS.map(([n]) => n), ...(whole ? ["postWhole"] : [])];

/**
 * A Miniflare running the decompose Worker, with the workerd process it started.
 * @typedef {Awaited<ReturnType<typeof start>>} Runtime
 */
async function start() {
  const before = workerdPids();
  const mf = await miniflareSwitchyard(bundle.script, { UPSTREAM_FAST: FAST, SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { fast: { targets: [{ kind: "llama", url: FAST }] } } }) });
  return { ...mf, pids: [...workerdPids()].filter((p) => !before.has(p)) };
}
/** @type {Runtime[]} */
const runtimes = [];
try {
  // Which Miniflare serves each layer: one for all, or one each.
  /** @type {Record<string, Runtime>} */
  const serving = {};
  for (const n of names.slice(1)) {
    if (MODE !== "processes" && runtimes[0]) serving[n] = runtimes[0];
    else runtimes.push((serving[n] = await start()));
  }
  const url = (/** @type {string} */ n) => (n === "direct" ? `${FAST}/v1/chat/completions` : n === "app" ? `${serving[n].url}/v1/chat/completions` : `${serving[n].url}/layer/${n}/v1/chat/completions`);
  const cpuOf = (/** @type {string} */ n) => serving[n].pids.reduce((sum, pid) => sum + cpuNs(pid), 0);
  /** @type {Record<string, number[]>} */
  const lat = Object.fromEntries(names.map((n) => [n, []]));
  /** @type {Record<string, number[]>} */
  const cpu = Object.fromEntries(names.map((n) => [n, []]));
  let seed = 7;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
  for (let round = -30; round < ROUNDS; round++) {
    const order = [...names];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const n of order) {
      if (MODE === "cpu" && n === "direct") continue;
      const t0 = n === "direct" ? 0 : cpuOf(n);
      for (let i = 0; i < BATCH; i++) {
        const r = await post(url(n), { model: "fast", messages: [{ role: "user", content: `${n}-${round}-${i}` }], ...EXTRA });
        // From a paced upstream the direct answer and the piped one are its SSE, not one JSON body.
        const piped = n === "direct" || n === "native";
        if (r.status !== 200 || (!r.done && !(piped && !whole))) throw new Error(`${n}: ${r.status} ${r.text}`);
        if (round >= 0) lat[n].push(r.end - r.t0);
      }
      if (round >= 0 && n !== "direct") cpu[n].push((cpuOf(n) - t0) / 1e6 / BATCH);
    }
  }
  const where = MODE === "processes" ? "each layer in a workerd of its own (Miniflare), one request to each in turn" : "one isolate (Miniflare)";
  /** @type {Array<[string, (layer: string) => number]>} */
  const rows = [];
  if (MODE !== "cpu") rows.push(["added latency p50", (n) => pct(lat[n], 50) - pct(lat.direct, 50)]);
  if (MODE !== "latency") rows.push(["CPU per request", (n) => pct(cpu[n], 50)]);
  console.log(`Non-stream request to the ${UPSTREAM} upstream, ${ROUNDS} rounds${BATCH > 1 ? ` × ${BATCH} requests per layer` : ""}, ${where}; ${rows.map(([r]) => r).join(" and ")} (median), in ms:\n`);
  console.log(`| layer | ${rows.map(([r]) => `${r} | over the layer before`).join(" | ")} |\n|---|${rows.map(() => "---:|---:|").join("")}`);
  const step = (/** @type {number} */ now, /** @type {number | null} */ before) => (before === null ? "—" : (now - before >= 0 ? "+" : "") + (now - before).toFixed(3));
  /** @type {Array<number | null>} */
  let before = rows.map(() => null);
  for (const [n, what] of LAYERS) {
    const now = rows.map(([, f]) => f(n));
    console.log(`| ${what} | ${now.map((v, i) => `${v.toFixed(3)} | ${step(v, before[i])}`).join(" | ")} |`);
    before = now;
  }
  if (whole && rows[0]) {
    const [label, f] = rows[0];
    const streamed = f("post"), read = f("postWhole");
    console.log(`\nThe alternative for non-stream requests: the same upstream request with \`stream: false\`, read whole: ${label} ${read.toFixed(3)} ms against ${streamed.toFixed(3)} ms streamed and gathered (${step(read, streamed)}).`);
  }
} finally {
  for (const r of runtimes) await r.stop();
  await up.stop();
  bundle.cleanup();
}
