#!/usr/bin/env node
// CPU of the request log's and the export's batches at a low, steady rate: one build, each observability
// configuration in a Miniflare of its own. Every tick sends `--per` requests (the fast upstream's
// 16-token answer, one at a time) to each configuration in turn, the order alternating, then waits out
// the tick; each workerd process's CPU over the whole run (and a settling time after it), per tick, is
// printed against the first configuration's. At one request a tick (the default) every batch holds one
// request, so the difference is a batch's own cost plus one request's; `off` twice is the resolution.
// ab.mjs cpu measures the other end, requests back to back (a batch then holds a hundred or more).
//   npx node bench/overhead/batch-cost.mjs [--rev <rev>] [--per 1] [--period 1100] [--duration 90000] [--configs <json>]
// --configs: {"name": <observability section> | {"observability": <section>, "vars": {...}}}, the first
// the baseline; "COLLECTOR" in a section stands for the bench's OTLP receiver. `vars`: extra Worker
// variables (a throwaway build's switches, say).
import { parseArgs } from "node:util";
import { post } from "./client.mjs";
import { buildWorker, checkoutRevision, miniflareSwitchyard } from "./runtimes.mjs";
import { startBenchUpstream } from "./upstream.mjs";
import { cpuNs, workerdPids } from "./workerd-cpu.mjs";

const { values: flags } = parseArgs({
  options: {
    rev: { type: "string" },
    per: { type: "string", default: "1" },
    period: { type: "string", default: "1100" },
    duration: { type: "string", default: "90000" },
    configs: { type: "string" },
  },
});
const PER = Number(flags.per);
const PERIOD = Number(flags.period);
const DURATION = Number(flags.duration);
/** Requests to each before the run (the JIT's warm-up), and the wait after it for the last batch and export. */
const WARMUP = 400;
const SETTLE_MS = 2500;
const DEFAULT_CONFIGS = {
  off: { log: false },
  "off again": { log: false },
  log: { log: true },
  export: { log: false, otlp: { endpoint: "COLLECTOR" } },
  "log and export": { otlp: { endpoint: "COLLECTOR" } },
};

const cleanups = [];
const up = await startBenchUpstream();
const collector = await startBenchUpstream();
try {
  const checkout = flags.rev ? checkoutRevision(flags.rev) : null;
  if (checkout) cleanups.push(checkout.cleanup);
  const worker = buildWorker(checkout?.dir);
  cleanups.push(worker.cleanup);
  const upstream = `http://127.0.0.1:${up.port}/fast`;
  const receiver = `http://127.0.0.1:${collector.port}/otlp`;
  /** @type {Record<string, { observability?: object, vars?: Record<string, string> } | object>} */
  const configs = flags.configs ? JSON.parse(flags.configs) : DEFAULT_CONFIGS;
  /** @type {Array<{ name: string, url: string, pids: string[], stop(): Promise<void> }>} */
  const runs = [];
  for (const [name, given] of Object.entries(configs)) {
    const withVars = typeof given === "object" && given !== null && "observability" in given;
    const observability = JSON.parse(JSON.stringify(withVars ? given.observability : given).replaceAll("COLLECTOR", receiver));
    const vars = { ...(withVars ? given.vars : {}), SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { fast: { targets: [{ kind: "llama", url: upstream }] } }, observability }) };
    const before = workerdPids();
    const mf = await miniflareSwitchyard(worker.script, vars, [], worker.compat);
    runs.push({ name, url: `${mf.url}/v1/chat/completions`, pids: [...workerdPids()].filter((p) => !before.has(p)), stop: mf.stop });
  }
  cleanups.push(async () => {
    for (const r of runs) await r.stop();
  });
  const body = { model: "fast", messages: [{ role: "user", content: "hi" }] };
  const cpuOf = (/** @type {(typeof runs)[number]} */ r) => r.pids.reduce((sum, pid) => sum + cpuNs(pid), 0);
  for (const r of runs) {
    for (let i = 0; i < WARMUP; i++) {
      const res = await post(r.url, body);
      if (res.status !== 200) throw new Error(`${r.name} did not answer: ${res.status} ${res.text}`);
    }
  }
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const start = runs.map(cpuOf);
  let ticks = 0;
  for (const end = Date.now() + DURATION; Date.now() < end; ticks++) {
    const t0 = Date.now();
    for (const r of ticks % 2 ? runs.toReversed() : runs) for (let i = 0; i < PER; i++) await post(r.url, body);
    await new Promise((r) => setTimeout(r, Math.max(0, PERIOD - (Date.now() - t0))));
  }
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const perTick = runs.map((r, i) => (cpuOf(r) - /** @type {number} */ (start[i])) / 1e6 / ticks);
  const base = /** @type {number} */ (perTick[0]);
  console.log(`${ticks} ticks of ${PERIOD} ms, ${PER} request${PER > 1 ? "s" : ""} a tick to each configuration; workerd CPU per tick (the whole run's):`);
  runs.forEach((r, i) => {
    const t = /** @type {number} */ (perTick[i]);
    console.log(`  ${r.name.padEnd(24)} ${t.toFixed(3)} ms   ${i ? `${t - base >= 0 ? "+" : ""}${(t - base).toFixed(3)} ms, ×${(t / base).toFixed(3)} against ${runs[0]?.name}` : ""}`);
  });
} finally {
  for (const c of cleanups.reverse()) await c();
  await up.close();
  await collector.close();
}
