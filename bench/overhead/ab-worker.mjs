#!/usr/bin/env node
// CPU per request of two builds of the Worker, side by side: each built with `wrangler deploy
// --dry-run` (A from a git revision, B from the working tree unless --b names one), each under its
// own Miniflare, both against the fast upstream (bench/overhead/upstream.mjs). Batches of requests
// alternate between them; the workerd process's CPU time (its threads' schedstat, Linux) per batch gives
// the cost per request, client and upstream excluded. For A/B checks of a hot-path change, which the
// latency benchmark's noise on shared cores would hide.
// `--a passthrough` puts the bare pass-through Worker (bench/passthrough-worker) in A's place.
//   npx node bench/overhead/ab-worker.mjs [--a HEAD|passthrough] [--b <rev>] [--runtime miniflare|dev] [--stream] [--tools] [--rounds 400] [--batch 20]
// Two identical builds (`--b HEAD`) differ by up to 2 % at 400 rounds: that is the resolution. At 60
// rounds, runs a minute apart gave 0.91 and 1.03 for the same pair of builds.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { post } from "./client.mjs";
import { buildWorker, checkoutRevision, devPassthrough, devSwitchyard, miniflarePassthrough, miniflareSwitchyard } from "./runtimes.mjs";
import { TOOLS, startBenchUpstream } from "./upstream.mjs";
import { cpuNs, workerdPids } from "./workerd-cpu.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const { values: flags } = parseArgs({
  options: {
    a: { type: "string", default: "HEAD" },
    b: { type: "string" },
    runtime: { type: "string", default: "miniflare" },
    stream: { type: "boolean", default: false },
    tools: { type: "boolean", default: false },
    rounds: { type: "string", default: "400" },
    batch: { type: "string", default: "20" },
  },
});
const { stream, tools } = flags;
/** `miniflare`: one workerd per build; `dev`: `wrangler dev` per build (its proxy in front). */
const RUNTIME = flags.runtime;
const ROUNDS = Number(flags.rounds);
const BATCH = Number(flags.batch);

/** @type {Array<() => void>} */
const cleanups = [];
/**
 * The Worker bundle of `rev` (a git revision) or of the working tree (`rev` undefined); `passthrough`: the runtime's floor.
 * @param {string | undefined} rev
 * @returns {Build}
 */
function build(rev) {
  if (rev === "passthrough") {
    // A folder of its own for wrangler dev's env file and state.
    mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
    const dir = mkdtempSync(join(ROOT, ".wrangler", "ab-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return { script: join(ROOT, "bench/passthrough-worker/index.js"), dir, passthrough: true };
  }
  const checkout = rev ? checkoutRevision(rev) : null;
  const worker = buildWorker(checkout?.dir);
  cleanups.push(worker.cleanup, ...(checkout ? [checkout.cleanup] : []));
  return { script: worker.script, dir: worker.dir, compat: worker.compat };
}

/**
 * @typedef {{ script: string, dir: string, passthrough?: boolean, compat?: ReturnType<typeof import("./runtimes.mjs").compatOf> }} Build
 * @typedef {{ stop(): Promise<void>, url: string, pids: string[] }} Run
 */

const vars = (/** @type {string} */ upstream) => ({ SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { fast: { targets: [{ kind: "llama", url: upstream }] } } }) });

/**
 * @param {Build} build
 * @param {string} upstream
 * @returns {Promise<Run>}
 */
async function start({ script, dir, passthrough, compat }, upstream) {
  const before = workerdPids();
  if (RUNTIME === "dev") {
    // wrangler dev runs two workerd processes (its proxy and the Worker): both are counted.
    const dev = passthrough ? await devPassthrough({ dir }, { UPSTREAM: upstream, LLAMA: upstream }) : await devSwitchyard({ script, dir }, vars(upstream));
    const pids = [...workerdPids()].filter((p) => !before.has(p));
    if (!pids.length) throw new Error("could not find wrangler dev's workerd processes");
    return { stop: dev.stop, url: `${dev.url}${passthrough ? new URL(upstream).pathname : ""}/v1/chat/completions`, pids };
  }
  // The Durable Object classes of the working tree's wrangler.toml (the revisions compared here share
  // them); each build's own compatibility date and flags.
  const mf = passthrough ? await miniflarePassthrough({ UPSTREAM: upstream }) : await miniflareSwitchyard(script, vars(upstream), [], compat);
  const url = `${mf.url}/v1/chat/completions`;
  const pids = [...workerdPids()].filter((p) => !before.has(p));
  if (!pids.length) throw new Error("could not find the workerd process");
  return { stop: mf.stop, url, pids };
}

const up = await startBenchUpstream();
const base = `http://127.0.0.1:${up.port}`;
const body = { model: "fast", messages: [{ role: "user", content: "hi" }], stream, ...(tools ? { tools: TOOLS } : {}) };
/** @type {Record<"A" | "B", Build>} */
const builds = { A: build(flags.a), B: build(flags.b) };
// The fast upstream's 16-token answer; with --tools, its 1,000-token answer with two calls written as text.
const path = tools ? "/flood-1000" : "/fast";
/** @type {Partial<Record<"A" | "B", Run>>} */
const runs = {};
/** @type {Array<"A" | "B">} */
const AB = ["A", "B"];
try {
  for (const k of AB) runs[k] = await start(builds[k], `${base}${path}`);
  const started = /** @type {Record<"A" | "B", Run>} */ (runs);
  for (const k of AB) {
    const probe = await post(started[k].url, body);
    if (probe.status !== 200) throw new Error(`${k} did not answer: ${probe.status} ${probe.text}`);
    for (let i = 0; i < BATCH; i++) await post(started[k].url, body);
  }
  /** @type {Record<"A" | "B", number[]>} */
  const ticks = { A: [], B: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of r % 2 ? AB.toReversed() : AB) {
      const cpu = () => started[k].pids.reduce((sum, pid) => sum + cpuNs(pid), 0);
      const t0 = cpu();
      for (let i = 0; i < BATCH; i++) await post(started[k].url, body);
      ticks[k].push(cpu() - t0);
    }
  }
  const perReq = (/** @type {number} */ t) => t / 1e6 / BATCH; // ms
  const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const a = median(ticks.A.map(perReq));
  const b = median(ticks.B.map(perReq));
  const sum = (/** @type {number[]} */ xs) => xs.reduce((s, x) => s + x, 0);
  console.log(`${RUNTIME}, ${stream ? "stream" : "non-stream"}${tools ? " with tools" : ""}, ${ROUNDS} rounds × ${BATCH} requests each, workerd CPU per request (median of rounds):`);
  console.log(`  A (${flags.a}): ${a.toFixed(3)} ms   B (${flags.b ?? "working tree"}): ${b.toFixed(3)} ms   B/A ${(b / a).toFixed(3)} (all rounds: ${(sum(ticks.B) / sum(ticks.A)).toFixed(3)})`);
} finally {
  for (const r of Object.values(runs)) await r.stop();
  await up.close();
  for (const c of cleanups) c();
}
