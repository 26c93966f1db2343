#!/usr/bin/env node
// Where Switchyard's own cost on a non-stream request goes. bench/overhead/decompose-entry.ts puts the
// whole app and handlers that each add one layer of its work (bare pass-through → gathering a stream
// in JS → request validation → Switchyard's parser → its upstream request → its adapter → routing and
// the responder → the route in a bare Hono app → the app with its middleware) in one Worker, so they
// share one isolate under one Miniflare, against the fast upstream (bench/overhead/upstream.mjs). Every
// round calls the upstream directly and every layer once, in a new shuffled order; the table gives
// each layer's added latency p50 and what it adds over the layer before.
// With --cpu it gives each layer's workerd CPU per request instead (batches of requests to one layer,
// the layers in a new shuffled order every round; the process's CPU time per batch, Linux only): the
// own cost on shared cores is mostly CPU, and CPU is not drowned by the latency's scheduling noise.
//   npx node bench/overhead/decompose.mjs [--rounds 600] [--upstream fast|paced-<ms>|llama] [--cpu [--batch 20]]
import { join, resolve } from "node:path";
import { pct, post } from "./client.mjs";
import { bundleEntry, miniflareSwitchyard } from "./runtimes.mjs";
import { startBenchUpstream } from "./upstream.mjs";
import { cpuNs, workerdPids } from "./workerd-cpu.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const argv = process.argv.slice(2);
const opt = (n, d) => (argv.includes(`--${n}`) ? argv[argv.indexOf(`--${n}`) + 1] : d);
const ROUNDS = Number(opt("rounds", 600));
// `fast`: the 16-token answer in one write; `paced-<ms>`: 20 tokens, each frame its own write <ms>
// apart, as llama-server writes them (each one a chunk the Worker reads); `llama`: the real
// llama-server with the tiny test model (max_tokens 4, as in `npm run bench`).
const UPSTREAM = opt("upstream", "fast");
const CPU = argv.includes("--cpu");
const BATCH = Number(opt("batch", 20));
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
const up = LLAMA ? await (await import("../../test/support/llama-server.mjs")).startLlamaServer({ parallel: 4, ctx: 4096 }) : await startBenchUpstream();
const FAST = LLAMA ? up.url : `http://127.0.0.1:${up.port}/${UPSTREAM}`;
const EXTRA = LLAMA ? { max_tokens: 4, temperature: 0 } : {};
const before = workerdPids();
const mf = await miniflareSwitchyard(bundle.script, { UPSTREAM_FAST: FAST, SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { fast: { targets: [{ kind: "llama", url: FAST }] } } }) });
try {
  const base = mf.url;
  const url = (name) => (name === "direct" ? `${FAST}/v1/chat/completions` : name === "app" ? `${base}/v1/chat/completions` : `${base}/layer/${name}/v1/chat/completions`);
  // The paced upstream streams whatever it is asked: the non-stream alternative needs another one.
  const whole = UPSTREAM === "fast" || LLAMA;
  const names = ["direct", ...LAYERS.map(([n]) => n), ...(whole ? ["postWhole"] : [])];
  const lat = Object.fromEntries(names.map((n) => [n, []]));
  const pids = [...workerdPids()].filter((p) => !before.has(p));
  const cpu = () => pids.reduce((sum, pid) => sum + cpuNs(pid), 0);
  let seed = 7;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
  for (let round = -30; round < ROUNDS; round++) {
    const order = [...names];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const n of order) {
      if (CPU && n === "direct") continue;
      const t0 = CPU ? cpu() : 0;
      for (let i = 0; i < (CPU ? BATCH : 1); i++) {
        const r = await post(url(n), { model: "fast", messages: [{ role: "user", content: `${n}-${round}-${i}` }], ...EXTRA });
        // From a paced upstream the direct answer and the piped one are its SSE, not one JSON body.
        const piped = n === "direct" || n === "native";
        if (r.status !== 200 || (!r.done && !(piped && !whole))) throw new Error(`${n}: ${r.status} ${r.text}`);
        if (round >= 0 && !CPU) lat[n].push(r.end - r.t0);
      }
      if (round >= 0 && CPU) lat[n].push((cpu() - t0) / 1e6 / BATCH);
    }
  }
  if (CPU) {
    console.log(`Non-stream request to the ${UPSTREAM} upstream, ${ROUNDS} rounds × ${BATCH} requests per layer, one isolate (Miniflare); workerd CPU per request, median of the rounds, in ms:\n`);
    console.log("| layer | CPU per request | over the layer before |\n|---|---:|---:|");
    let prev = null;
    for (const [n, what] of LAYERS) {
      const ms = pct(lat[n], 50);
      console.log(`| ${what} | ${ms.toFixed(3)} | ${prev === null ? "—" : (ms - prev >= 0 ? "+" : "") + (ms - prev).toFixed(3)} |`);
      prev = ms;
    }
    if (whole) console.log(`\nThe alternative for non-stream requests (\`stream: false\`, read whole): ${pct(lat.postWhole, 50).toFixed(3)} ms against ${pct(lat.post, 50).toFixed(3)} ms streamed and gathered.`);
  } else printLatency(lat, whole);
} finally {
  await mf.stop();
  await (LLAMA ? up.stop() : up.close());
  bundle.cleanup();
}

function printLatency(lat, whole) {
  const d = pct(lat.direct, 50);
  console.log(`Non-stream request to the ${UPSTREAM} upstream, ${ROUNDS} rounds, one isolate (Miniflare); added latency p50 in ms:\n`);
  console.log("| layer | added p50 | over the layer before |\n|---|---:|---:|");
  let before = null;
  for (const [n, what] of LAYERS) {
    const added = pct(lat[n], 50) - d;
    console.log(`| ${what} | ${added.toFixed(3)} | ${before === null ? "—" : (added - before >= 0 ? "+" : "") + (added - before).toFixed(3)} |`);
    before = added;
  }
  if (whole) {
    const streamed = pct(lat.post, 50) - d, read = pct(lat.postWhole, 50) - d;
    console.log(`\nThe alternative for non-stream requests: the same upstream request with \`stream: false\`, read whole: ${read.toFixed(3)} ms against ${streamed.toFixed(3)} ms streamed and gathered (${(read - streamed >= 0 ? "+" : "") + (read - streamed).toFixed(3)}).`);
  }
}
