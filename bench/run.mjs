#!/usr/bin/env node
// `npm run bench`: Switchyard's overhead side by side with the runtime's floor and a peer, written to
// docs/benchmarks.md ("Proxy overhead"). Every path is measured in one session, round-robin per request
// (a new shuffled order each round), so noise on the shared machine hits all paths alike:
//   direct               the upstream itself
//   pass-through (mf|dev) a bare Worker that returns the upstream's body (bench/passthrough-worker), the runtime's floor
//   Switchyard (mf|dev)  the Worker as deployed (`wrangler deploy --dry-run`, minified)
//   Portkey              @portkey-ai/gateway on Node (bench/portkey, installed here)
// mf = Miniflare directly (one workerd); dev = `wrangler dev` (its proxy in front).
// Upstreams: a fast Node server speaking llama-server's protocol (bench/overhead/upstream.mjs) and the
// real llama-server with the tiny test model (test/support/llama-server.mjs). Loopback only.
//   npm run bench [-- --rounds 200] [--quick] [--no-dev] [--no-llama] [--no-diagnostic] [--no-write] [--json out.json]
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { agent, pct, post } from "./overhead/client.mjs";
import { pipelineMedian } from "./overhead/pipeline.mjs";
import { buildWorker, devPassthrough, devSwitchyard, installPortkey, miniflarePassthrough, miniflareSwitchyard, portkeyVersions, startPortkey } from "./overhead/runtimes.mjs";
import { TOOLS, startBenchUpstream } from "./overhead/upstream.mjs";
import { writeReport } from "./overhead/report.mjs";

const ROOT = resolve(import.meta.dirname, "..");
const argv = process.argv.slice(2);
const { values: flags } = parseArgs({
  args: argv,
  options: {
    rounds: { type: "string" },
    "llama-rounds": { type: "string" },
    quick: { type: "boolean", default: false },
    "no-dev": { type: "boolean", default: false },
    "no-llama": { type: "boolean", default: false },
    "no-diagnostic": { type: "boolean", default: false },
    "no-write": { type: "boolean", default: false },
    json: { type: "string" },
  },
});
const QUICK = flags.quick;
const ROUNDS = Number(flags.rounds ?? (QUICK ? 40 : 200));
const LLAMA_ROUNDS = Number(flags["llama-rounds"] ?? (QUICK ? 10 : 400));
const log = (/** @type {string} */ s) => process.stderr.write(`[bench] ${s}\n`);

const machine = {
  cpu: cpus()[0]?.model ?? "unknown",
  cores: cpus().length,
  node: process.version,
  workerd: execFileSync(join(ROOT, "node_modules/.bin/workerd"), ["--version"], { encoding: "utf8" }).trim(),
  wrangler: JSON.parse(readFileSync(join(ROOT, "node_modules/wrangler/package.json"), "utf8")).version,
  loadStart: loadavg().map((x) => x.toFixed(2)).join(" "),
  date: new Date().toISOString().slice(0, 16).replace("T", " ") + " UTC",
};

log("installing bench/portkey (npm install --prefix, its own lockfile) if needed");
installPortkey();
log("building the Worker (wrangler deploy --dry-run)");
const build = buildWorker();
const up = await startBenchUpstream();
const UP = `http://127.0.0.1:${up.port}`;
/** @type {import("../test/support/llama-server.mjs").LlamaServer | null} */
let llama = null;
if (!flags["no-llama"]) {
  const { startLlamaServer } = await import("../test/support/llama-server.mjs");
  log("starting llama-server (tiny test model)");
  llama = await startLlamaServer({ parallel: 4, ctx: 4096 });
}

const modes = ["fast", "paced-5", "flood-1000"];
/** @type {{ models: Record<string, { targets: Array<{ kind: "llama", url: string }> }> }} */
const config = { models: Object.fromEntries(modes.map((m) => [m, { targets: [{ kind: "llama", url: `${UP}/${m}` }] }])) };
if (llama) config.models.llama = { targets: [{ kind: "llama", url: llama.url }] };
const syVars = { SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify(config), LLAMA_URL: llama?.url ?? UP };
const ptVars = { UPSTREAM: UP, LLAMA: llama?.url ?? UP };

/**
 * A path under test: the URL of a request for `mode` (an upstream behaviour, or "llama"), and its headers.
 * @typedef {{ name: string, group: string, url: (mode: string) => string, headers: (mode: string) => Record<string, string> }} BenchPath
 */

/** @type {import("./overhead/runtimes.mjs").Proxy[]} */
const running = [];
/**
 * @template {import("./overhead/runtimes.mjs").Proxy} P
 * @param {string} what
 * @param {Promise<P>} p
 */
const started = async (what, p) => {
  log(`starting ${what}`);
  const s = await p;
  running.push(s);
  return s;
};
/** @type {BenchPath[]} */
const paths = [];
const base = (/** @type {string} */ mode) => (mode === "llama" && llama ? llama.url : `${UP}/${mode}`);
/**
 * @param {string} name
 * @param {string} group
 * @param {BenchPath["url"]} url
 * @param {BenchPath["headers"]} [headers]
 */
const add = (name, group, url, headers = () => ({})) => paths.push({ name, group, url, headers });

try {
  add("direct", "direct", (m) => `${base(m)}/v1/chat/completions`);
  // Each path in a process of its own, as Switchyard's are: a path that shared one would sometimes
  // find it just woken by the path before (the order is shuffled every round).
  const pmf = await started("pass-through (Miniflare)", miniflarePassthrough(ptVars));
  add("pass-through, Miniflare", "floor-mf", (m) => `${pmf.url}/${m === "llama" ? "llama" : m}/v1/chat/completions`);
  const pjs = await started("pass-through reading in JS (Miniflare)", miniflarePassthrough(ptVars));
  add("pass-through reading in JS, Miniflare", "floor-js-mf", (m) => `${pjs.url}/js/${m === "llama" ? "llama" : m}/v1/chat/completions`);
  const pgather = await started("pass-through gathering in JS (Miniflare)", miniflarePassthrough(ptVars));
  add("pass-through gathering in JS, Miniflare", "floor-gather-mf", (m) => `${pgather.url}/gather/${m === "llama" ? "llama" : m}/v1/chat/completions`);
  const smf = await started("Switchyard (Miniflare)", miniflareSwitchyard(build.script, syVars));
  add("Switchyard, Miniflare", "sy-mf", () => `${smf.url}/v1/chat/completions`);
  if (!flags["no-diagnostic"]) {
    // Diagnostic: the same Worker without the HEALTH_HUB binding, so no health snapshot is read and
    // no health report is sent (Durable Object calls, batched to about one a second per isolate).
    const snh = await started("Switchyard without HealthHub (Miniflare)", miniflareSwitchyard(build.script, syVars, ["HEALTH_HUB"]));
    add("Switchyard without HEALTH_HUB (diagnostic), Miniflare", "sy-nohealth-mf", () => `${snh.url}/v1/chat/completions`);
  }
  if (!flags["no-dev"]) {
    const pdev = await started("pass-through (wrangler dev)", devPassthrough(build, ptVars));
    add("pass-through, wrangler dev", "floor-dev", (m) => `${pdev.url}/${m === "llama" ? "llama" : m}/v1/chat/completions`);
    const sdev = await started("Switchyard (wrangler dev)", devSwitchyard(build, syVars));
    add("Switchyard, wrangler dev", "sy-dev", () => `${sdev.url}/v1/chat/completions`);
  }
  const pk = await started("Portkey gateway (Node)", startPortkey());
  add("Portkey gateway, Node", "portkey", () => `${pk.url}/v1/chat/completions`, (m) => ({ "x-portkey-provider": "openai", "x-portkey-custom-host": `${base(m)}/v1`, authorization: "Bearer bench" }));

  /**
   * @param {BenchPath} p
   * @param {string} mode
   * @param {Record<string, unknown>} body
   * @param {{ frames?: boolean, timeoutMs?: number }} [o]
   */
  const call = (p, mode, body, o = {}) => post(p.url(mode), { model: mode, ...body }, { headers: p.headers(mode), ...o });
  // A new order every round (seeded): with a fixed cyclic order each path always followed the same
  // one, and when paths shared a process, the one after its sibling always found it just woken.
  let seed = 20261130;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
  const shuffled = () => {
    const order = [...paths];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    return order;
  };
  /** @type {Record<string, number>} */
  const errors = {};
  /**
   * @param {BenchPath} p
   * @param {Awaited<ReturnType<typeof post>>} res
   * @param {string} what
   */
  const check = (p, res, what) => {
    if (res.status === 200 && res.done) return true;
    const k = `${p.name} ${what}`;
    errors[k] = (errors[k] ?? 0) + 1;
    if (errors[k] === 1) log(`error: ${k}: ${res.status} ${res.text}`);
    return false;
  };

  // 1. Added latency: non-stream (whole body) and stream (first frame carrying a token), round-robin per request.
  /**
   * @param {string} mode
   * @param {number} rounds
   * @param {Record<string, unknown>} extra
   */
  const latency = async (mode, rounds, extra) => {
    /** @type {import("./overhead/report.mjs").LatencySets} */
    const out = Object.fromEntries(paths.map((p) => [p.name, { json: [], first: [] }]));
    for (let r = -5; r < rounds; r++) {
      for (const p of shuffled()) {
        const res = await call(p, mode, { messages: [{ role: "user", content: `say ok ${r}` }], ...extra });
        if (check(p, res, `${mode} non-stream`) && r >= 0) out[p.name].json.push(res.end - res.t0);
      }
      for (const p of shuffled()) {
        const res = await call(p, mode, { stream: true, messages: [{ role: "user", content: `say ok ${r}` }], ...extra });
        if (check(p, res, `${mode} stream`) && r >= 0) out[p.name].first.push((res.token || res.first) - res.t0);
      }
    }
    return out;
  };
  log(`latency, fast upstream: ${ROUNDS} rounds × ${paths.length} paths`);
  const fast = await latency("fast", ROUNDS, {});
  let llamaLatency;
  if (llama) {
    log(`latency, llama-server: ${LLAMA_ROUNDS} rounds × ${paths.length} paths`);
    llamaLatency = await latency("llama", LLAMA_ROUNDS, { max_tokens: 4, temperature: 0 });
  }

  // 2. Paced stream: 40 frames 5 ms apart; per-frame delay after the upstream's write, and the gaps.
  const PACED = QUICK ? 5 : 20;
  log(`paced stream: ${PACED} rounds × 40 frames`);
  // spread: each gap at the client minus the same two frames' gap at the upstream (the change in
  // one frame's delay from the frame before), so the upstream's own timer jitter cancels out.
  /** @type {import("./overhead/report.mjs").Results["paced"]} */
  const paced = Object.fromEntries(paths.map((p) => [p.name, { delay: [], gap: [], spread: [] }]));
  for (let r = -1; r < PACED; r++) {
    for (const p of shuffled()) {
      const key = `${p.group}-${r}`;
      const res = await call(p, "paced-5", { stream: true, max_tokens: 40, messages: [{ role: "user", content: key }] }, { frames: true });
      if (!check(p, res, "paced") || r < 0) continue;
      /** @type {{ at: number, delay: number } | null} */
      let prev = null;
      for (const [at, text] of res.frames) {
        const m = /tok(\d+) /.exec(text);
        if (!m) continue;
        const sent = up.sentAt.get(`${key}:${m[1]}`);
        if (sent === undefined) throw new Error(`${p.name}: frame tok${m[1]} of ${key} was never sent by the upstream`);
        const delay = at - sent;
        paced[p.name].delay.push(delay);
        if (prev !== null) {
          paced[p.name].gap.push(at - prev.at);
          paced[p.name].spread.push(delay - prev.delay);
        }
        prev = { at, delay };
      }
    }
  }

  // 3. Frames per second from an upstream that streams 1,000 frames as fast as it can.
  const FLOOD = QUICK ? 3 : 8;
  log(`flood: ${FLOOD} rounds × 1,000 frames, with and without tools`);
  /** @type {import("./overhead/report.mjs").Results["flood"]} */
  const flood = Object.fromEntries(paths.map((p) => [p.name, { plain: [], tools: [] }]));
  for (let r = -1; r < FLOOD; r++) {
    for (const tools of [false, true]) {
      for (const p of shuffled()) {
        const res = await call(p, "flood-1000", { stream: true, messages: [{ role: "user", content: "go" }], ...(tools ? { tools: TOOLS } : {}) });
        if (check(p, res, tools ? "flood with tools" : "flood") && r >= 0) flood[p.name][tools ? "tools" : "plain"].push(1004 / ((res.end - res.t0) / 1000));
      }
    }
  }

  // 4. Concurrent streams: all at once, one path at a time (rotating), each level.
  /** @type {import("./overhead/report.mjs").Results["concurrency"]} */
  const concurrency = {};
  for (const n of QUICK ? [1, 10, 100] : [1, 10, 100, 1000]) {
    log(`concurrency ${n}`);
    concurrency[n] = {};
    for (const p of shuffled()) {
      const all = await Promise.all(Array.from({ length: n }, (_, i) => call(p, "fast", { stream: true, messages: [{ role: "user", content: `c${i}` }] }, { timeoutMs: 30_000 })));
      const ok = all.filter((res) => res.status === 200 && res.done);
      concurrency[n][p.name] = { errors: all.length - ok.length, total: all.length, latency: ok.map((res) => res.end - res.t0) };
      const failed = all.find((res) => !(res.status === 200 && res.done));
      if (failed) log(`  ${p.name}: ${all.length - ok.length} errors, e.g. ${failed.status} ${failed.text.slice(0, 200)}`);
      agent.destroy();
    }
  }

  // 5. CPU of the pipeline in Node.
  // In fresh Node processes, so the collector is not also sweeping this run's own samples; five
  // of them, each workload's median run kept.
  log("pipeline CPU in Node (5 fresh processes)");
  const pipeline = pipelineMedian(
    Array.from({ length: 5 }, () => JSON.parse(execFileSync(process.execPath, [join(ROOT, "bench/overhead/pipeline.mjs"), "--runs", String(QUICK ? 50 : 200)], { encoding: "utf8", maxBuffer: 1 << 24 }))),
  );
  const loadEnd = loadavg().map((x) => x.toFixed(2)).join(" ");
  /** @type {import("./overhead/report.mjs").Results} */
  const results = {
    machine: { ...machine, loadEnd },
    rounds: ROUNDS,
    llamaRounds: LLAMA_ROUNDS,
    paths: paths.map((p) => p.name),
    bundle: { bytes: build.bytes, gzipBytes: build.gzipBytes },
    fast,
    ...(llamaLatency ? { llama: llamaLatency } : {}),
    paced,
    flood,
    concurrency,
    errors,
    pipeline,
    portkey: portkeyVersions(),
    command: `npm run bench${argv.length ? ` -- ${argv.join(" ")}` : ""}`,
  };

  if (flags.json) writeFileSync(flags.json, JSON.stringify(results, (k, v) => (Array.isArray(v) && typeof v[0] === "number" && v.length > 20 ? summary(v) : v), 2));
  const md = writeReport(results, flags["no-write"] ? null : join(ROOT, "docs/benchmarks.md"));
  console.log(md);
} finally {
  agent.destroy();
  for (const s of running.reverse()) await s.stop().catch(() => {});
  await up.close();
  await llama?.stop();
  build.cleanup();
}

/** @param {number[]} xs */
function summary(xs) {
  return { n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99) };
}
