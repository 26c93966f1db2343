#!/usr/bin/env node
// Two builds of Switchyard side by side, in one run: A from a git revision (default HEAD), B from the
// working tree unless --b names one; the machine's noise hits both alike, so the ratio B/A (or the
// difference B − A) is what to read, not the absolute figures. Three measures:
//
//   cpu       workerd CPU per request: each build (`wrangler deploy --dry-run`) in its own Miniflare
//             (or `--runtime dev`: wrangler dev), against the fast upstream (bench/overhead/upstream.mjs);
//             batches alternate and the workerd process's CPU time (its threads' schedstat, Linux) per
//             batch gives the cost per request, client and upstream excluded. `--a passthrough` puts the
//             bare pass-through Worker (bench/passthrough-worker) in A's place: the runtime's floor.
//             A workerd process keeps its own offset for its whole life (its layout, what its JIT did):
//             two identical builds differed by up to 2 % at 400 rounds on a quiet machine, by −8 to +5 %
//             per run on a busy one (3 Dec 2026). `--runs N` starts both afresh N times and gives the
//             median of the runs' ratios: 8 runs of identical builds gave 0.995 (all rounds 1.004).
//             Each run also reads each process's CPU over the whole run and a settling time after it
//             ("whole run"): work a build does in the background (the request log's batch, its export)
//             falls as often as not in the other build's rounds, and a round holding it is above the
//             median; the whole run counts it (16 runs of identical builds: 1.002, runs 0.941–1.026).
//             `--warmup` requests go to each build before a run's rounds, then the settling time, so
//             the warm-up's own batch is not counted. The default, 2,000, is a warm-up for code run a
//             batch at a time too: 200 (about one batch) left the request log's and the export's code
//             and heap young, and added some 3 % to their whole-run cost (bench/overhead/NOTES.md, "4 Dec 17:05").
//   latency   added latency, both apps bundled behind one entry that picks the app per request by the
//             x-ab header, under one Miniflare; every round sends one request straight to the upstream,
//             one to A and one to B, in an order cycling through all six permutations (a fixed order
//             biases whichever path follows the direct one). Resolution about ±0.02 ms.
//   pipeline  CPU of the pure pipeline (bench/overhead/pipeline-entry.ts runPure: the 1,000-token
//             answer, with and without tools) in one Node process, both bundles warmed up.
//
//   npx node bench/overhead/ab.mjs cpu [--a HEAD|passthrough] [--b <rev>] [--runtime miniflare|dev] [--stream] [--tools] [--rounds 400] [--batch 20] [--runs 1] [--warmup 2000]
//                                      [--otlp] [--a-otlp] [--a-observability <json>] [--b-observability <json>] [--a-queue <json>] [--b-queue <json>] [--settle 2500]
//             (each build's request log and traces; --otlp: B exports to a receiver in the bench, --a-otlp: A
//             does too (two builds compared with both exporting); --a worktree: A is the working tree too,
//             so the two differ by configuration alone; --settle: the wait for the last batches before
//             the whole run's CPU is read, longer for a build that batches less often)
//   npx node bench/overhead/ab.mjs latency [--a HEAD] [--b <rev>] [--stream] [--rounds 1000]
//   npx node bench/overhead/ab.mjs pipeline [--a HEAD] [--b <rev>] [--rounds 30] [--batch 100]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { pct, post } from "./client.mjs";
import { loadPipeline, workloads } from "./pipeline.mjs";
import { buildWorker, bundleEntry, checkoutRevision, devPassthrough, devSwitchyard, miniflarePassthrough, miniflareSwitchyard } from "./runtimes.mjs";
import { TOOLS, startBenchUpstream } from "./upstream.mjs";
import { cpuNs, workerdPids } from "./workerd-cpu.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const DEFAULTS = { cpu: { rounds: "400", batch: "20" }, latency: { rounds: "1000", batch: "1" }, pipeline: { rounds: "30", batch: "100" } };
const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    a: { type: "string", default: "HEAD" },
    b: { type: "string" },
    runtime: { type: "string", default: "miniflare" },
    stream: { type: "boolean", default: false },
    tools: { type: "boolean", default: false },
    otlp: { type: "boolean", default: false },
    "a-otlp": { type: "boolean", default: false },
    "a-observability": { type: "string" },
    "b-observability": { type: "string" },
    "a-queue": { type: "string" },
    "b-queue": { type: "string" },
    rounds: { type: "string" },
    runs: { type: "string", default: "1" },
    warmup: { type: "string", default: "2000" },
    settle: { type: "string", default: "2500" },
    batch: { type: "string" },
  },
});
const measure = /** @type {keyof typeof DEFAULTS} */ (positionals[0] ?? "");
if (!(measure in DEFAULTS) || positionals.length > 1) {
  console.error("usage: npx node bench/overhead/ab.mjs cpu|latency|pipeline [--a <rev>] [--b <rev>] [--rounds N] [--batch N] [--stream] [--tools] [--runtime miniflare|dev]");
  process.exit(2);
}
const { stream, tools } = flags;
/** `miniflare`: one workerd per build; `dev`: `wrangler dev` per build (its proxy in front). */
const RUNTIME = flags.runtime;
const ROUNDS = Number(flags.rounds ?? DEFAULTS[measure].rounds);
const BATCH = Number(flags.batch ?? DEFAULTS[measure].batch);
/** cpu: fresh processes per run; requests to each build before a run's rounds (the JIT's warm-up). */
const RUNS = Number(flags.runs);
const WARMUP = Number(flags.warmup);
/** @type {Array<"A" | "B">} */
const AB = ["A", "B"];
/** cpu: the wait after a run's rounds before its whole-run CPU is read (`--settle`): a request log's batch (1 s) and its export end within it. */
const SETTLE_MS = Number(flags.settle);

/** @type {Array<() => void>} */
const cleanups = [];
/**
 * A checkout of `rev` (removed at the end), or null for the working tree.
 * @param {string | undefined} rev
 */
function checkout(rev) {
  if (!rev) return null;
  const c = checkoutRevision(rev);
  cleanups.push(c.cleanup);
  return c;
}

// ---- cpu -------------------------------------------------------------------------------------------

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
  const worker = buildWorker(checkout(rev)?.dir);
  cleanups.push(worker.cleanup);
  return { script: worker.script, dir: worker.dir, compat: worker.compat };
}

/**
 * @typedef {{ script: string, dir: string, passthrough?: boolean, compat?: ReturnType<typeof import("./runtimes.mjs").compatOf> }} Build
 * @typedef {{ stop(): Promise<void>, url: string, pids: string[] }} Run
 */

/**
 * A build's `observability` section: `--a-observability` / `--b-observability <json>`, and for B with
 * `--otlp` the export to the bench upstream's OTLP receiver. By default A has none: a revision from
 * before the section would refuse it.
 * @param {"A" | "B"} k
 * @param {string | undefined} receiver the OTLP receiver's endpoint (with --otlp)
 */
function observabilityOf(k, receiver) {
  const given = flags[k === "A" ? "a-observability" : "b-observability"];
  const o = given ? JSON.parse(given) : {};
  return (k === "B" ? flags.otlp : flags["a-otlp"]) && receiver ? { ...o, otlp: { endpoint: receiver } } : o;
}

/**
 * A build's `queue` section: `--a-queue` / `--b-queue <json>` (e.g. '{"shared":true}': the line a
 * deployment runs, the AdmissionHub's, instead of `npm start`'s own). None by default.
 * @param {"A" | "B"} k
 */
function queueOf(k) {
  const given = flags[k === "A" ? "a-queue" : "b-queue"];
  return given ? JSON.parse(given) : undefined;
}

/**
 * @param {string} upstream
 * @param {object} [observability]
 * @param {object} [queue]
 */
const vars = (upstream, observability, queue) => ({
  SWITCHYARD_ENV: "dev",
  SWITCHYARD_CONFIG: JSON.stringify({ models: { fast: { targets: [{ kind: "llama", url: upstream }] } }, ...(observability && Object.keys(observability).length ? { observability } : {}), ...(queue ? { queue } : {}) }),
});

/**
 * @param {Build} build
 * @param {string} upstream
 * @param {object} [observability] the build's `observability` section
 * @param {object} [queue] the build's `queue` section
 * @returns {Promise<Run>}
 */
async function start({ script, dir, passthrough, compat }, upstream, observability, queue) {
  const before = workerdPids();
  if (RUNTIME === "dev") {
    // wrangler dev runs two workerd processes (its proxy and the Worker): both are counted.
    const dev = passthrough ? await devPassthrough({ dir }, { UPSTREAM: upstream, LLAMA: upstream }) : await devSwitchyard({ script, dir }, vars(upstream, observability, queue));
    const pids = [...workerdPids()].filter((p) => !before.has(p));
    if (!pids.length) throw new Error("could not find wrangler dev's workerd processes");
    return { stop: dev.stop, url: `${dev.url}${passthrough ? new URL(upstream).pathname : ""}/v1/chat/completions`, pids };
  }
  // The Durable Object classes of the working tree's wrangler.toml (the revisions compared here share
  // them); each build's own compatibility date and flags.
  const mf = passthrough ? await miniflarePassthrough({ UPSTREAM: upstream }) : await miniflareSwitchyard(script, vars(upstream, observability, queue), [], compat);
  const url = `${mf.url}/v1/chat/completions`;
  const pids = [...workerdPids()].filter((p) => !before.has(p));
  if (!pids.length) throw new Error("could not find the workerd process");
  return { stop: mf.stop, url, pids };
}

async function cpu() {
  const up = await startBenchUpstream();
  const base = `http://127.0.0.1:${up.port}`;
  // The OTLP receiver is a server of its own, as a collector is: an export of half a megabyte to the
  // upstream's own server held one of the connections workerd pools for it (B then opened others).
  const collector = flags.otlp || flags["a-otlp"] ? await startBenchUpstream() : undefined;
  const receiver = collector ? `http://127.0.0.1:${collector.port}/otlp` : undefined;
  const body = { model: "fast", messages: [{ role: "user", content: "hi" }], stream, ...(tools ? { tools: TOOLS } : {}) };
  // `--a worktree`: A is the working tree too (with its own observability, say): one build for both.
  const B = build(flags.b);
  /** @type {Record<"A" | "B", Build>} */
  const builds = { A: flags.a === "worktree" ? (flags.b ? build(flags.b) : B) : build(flags.a), B };
  // The fast upstream's 16-token answer; with --tools, its 1,000-token answer with two calls written as text.
  const path = tools ? "/flood-1000" : "/fast";
  const perReq = (/** @type {number} */ t) => t / 1e6 / BATCH; // ms
  const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const sum = (/** @type {number[]} */ xs) => xs.reduce((s, x) => s + x, 0);
  console.log(`${RUNTIME}, ${stream ? "stream" : "non-stream"}${tools ? " with tools" : ""}, ${RUNS} run${RUNS > 1 ? "s" : ""} of ${ROUNDS} rounds × ${BATCH} requests each, workerd CPU per request (median of rounds):`);
  /** @type {Array<{ median: number, all: number, whole: number }>} */
  const ratios = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      // Each run starts both builds afresh (a process's own layout and compiled code shift its figures
      // by a few percent for its whole life: runs, not rounds, average that out), in alternating order.
      /** @type {Partial<Record<"A" | "B", Run>>} */
      const runs = {};
      try {
        for (const k of run % 2 ? AB.toReversed() : AB) runs[k] = await start(builds[k], `${base}${path}`, observabilityOf(k, receiver), queueOf(k));
        const started = /** @type {Record<"A" | "B", Run>} */ (runs);
        for (const k of AB) {
          const probe = await post(started[k].url, body);
          if (probe.status !== 200) throw new Error(`${k} did not answer: ${probe.status} ${probe.text}`);
          for (let i = 0; i < WARMUP; i++) await post(started[k].url, body);
        }
        // The warm-up's last batch (the request log's rows, the export) is handled a second after it:
        // waited out here, so it is not counted in the run (it fell in B's measured window when B warmed up last).
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        /** @type {Record<"A" | "B", number[]>} */
        const ticks = { A: [], B: [] };
        const cpuOf = (/** @type {"A" | "B"} */ k) => started[k].pids.reduce((sum, pid) => sum + cpuNs(pid), 0);
        // The whole run's CPU too: work a build does in the background (a batch written, spans
        // exported) often falls while the other build's round is measured, and a round that holds it
        // is above the median; the whole run, with a settling time after it, counts all of it.
        const whole = { A: cpuOf("A"), B: cpuOf("B") };
        for (let r = 0; r < ROUNDS; r++) {
          for (const k of r % 2 ? AB.toReversed() : AB) {
            const t0 = cpuOf(k);
            for (let i = 0; i < BATCH; i++) await post(started[k].url, body);
            ticks[k].push(cpuOf(k) - t0);
          }
        }
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        const wholeRatio = (cpuOf("B") - whole.B) / (cpuOf("A") - whole.A);
        const a = median(ticks.A.map(perReq));
        const b = median(ticks.B.map(perReq));
        ratios.push({ median: b / a, all: sum(ticks.B) / sum(ticks.A), whole: wholeRatio });
        console.log(`  A (${flags.a}): ${a.toFixed(3)} ms   B (${flags.b ?? "working tree"}): ${b.toFixed(3)} ms   B/A ${(b / a).toFixed(3)} (all rounds: ${(sum(ticks.B) / sum(ticks.A)).toFixed(3)}; whole run: ${wholeRatio.toFixed(3)})`);
      } finally {
        for (const r of Object.values(runs)) await r.stop();
      }
    }
    if (RUNS > 1) {
      const m = ratios.map((r) => r.median);
      const all = ratios.map((r) => r.all);
      const whole = ratios.map((r) => r.whole);
      const range = (/** @type {number[]} */ xs) => `${median(xs).toFixed(3)} (runs ${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)})`;
      console.log(`  over ${RUNS} runs: B/A median ${range(m)}; all rounds ${range(all)}; whole run ${range(whole)}`);
    }
    if (collector) console.log(`  ${flags["a-otlp"] ? (flags.otlp ? "A and B" : "A") : "B"} exported ${collector.spans.count} spans to the bench's OTLP receiver`);
  } finally {
    await up.close();
    await collector?.close();
  }
}

// ---- latency ---------------------------------------------------------------------------------------

async function latency() {
  const srcOf = (/** @type {string | undefined} */ rev) => join(checkout(rev)?.dir ?? ROOT, "src");
  const A = flags.a;
  const B = flags.b;
  const [srcA, srcB] = [srcOf(A), srcOf(B)];
  mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".wrangler", "ab-latency-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  // The Durable Object classes come from B; both apps reach them through the same bindings.
  writeFileSync(
    join(dir, "entry.ts"),
    `import appA from ${JSON.stringify(join(srcA, "index.ts"))};
  import appB from ${JSON.stringify(join(srcB, "index.ts"))};
  export * from ${JSON.stringify(join(srcB, "index.ts"))};
  export default { fetch: (req: Request, env: unknown, ctx: ExecutionContext) => (req.headers.get("x-ab") === "a" ? appA : appB).fetch(req, env, ctx) };
  `,
  );
  const bundle = await bundleEntry(join(dir, "entry.ts"));
  cleanups.push(bundle.cleanup);

  const up = await startBenchUpstream();
  const UP = `http://127.0.0.1:${up.port}`;
  const mf = await miniflareSwitchyard(bundle.script, { SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { fast: { targets: [{ kind: "llama", url: `${UP}/fast` }] } } }) });
  try {
    const base = mf.url;
    const body = { model: "fast", stream, messages: [{ role: "user", content: "hi" }] };
    const urls = { direct: `${UP}/fast/v1/chat/completions`, a: `${base}/v1/chat/completions`, b: `${base}/v1/chat/completions` };
    /** @type {Array<Array<keyof typeof urls>>} */
    const ORDERS = [["direct", "a", "b"], ["a", "b", "direct"], ["b", "direct", "a"], ["b", "a", "direct"], ["a", "direct", "b"], ["direct", "b", "a"]];
    /** @type {Record<keyof typeof urls, number[]>} */
    const lat = { direct: [], a: [], b: [] };
    for (let round = -60; round < ROUNDS; round++) {
      for (const k of ORDERS[(round + 60) % 6]) {
        const r = await post(urls[k], body, { headers: k === "direct" ? {} : { "x-ab": k } });
        if (!r.done) throw new Error(`${k}: ${r.status} ${r.text}`);
        if (round >= 0) lat[k].push((stream ? r.token || r.first : r.end) - r.t0);
      }
    }
    const d = pct(lat.direct, 50);
    const diffs = lat.b.map((x, i) => x - lat.a[i]);
    console.log(`${stream ? "first frame" : "non-stream"}, ${ROUNDS} rounds, one Miniflare, added latency p50:`);
    console.log(`  A (${A}): ${(pct(lat.a, 50) - d).toFixed(3)} ms   B (${B ?? "working tree"}): ${(pct(lat.b, 50) - d).toFixed(3)} ms   B − A: ${(pct(lat.b, 50) - pct(lat.a, 50)).toFixed(3)} ms (per-round differences: median ${pct(diffs, 50).toFixed(3)}, quartiles ${pct(diffs, 25).toFixed(3)} … ${pct(diffs, 75).toFixed(3)})`);
  } finally {
    await mf.stop();
    await up.close();
  }
}

// ---- pipeline --------------------------------------------------------------------------------------

async function pipeline() {
  /** runPure of `rev` (a git revision) or of the working tree (`rev` undefined). */
  const load = async (/** @type {string | undefined} */ rev) => (await loadPipeline(checkout(rev)?.dir)).runPure;
  const runs = { A: await load(flags.a), B: await load(flags.b) };
  const { synthetic } = workloads();
  /** @type {Array<[string, typeof TOOLS | undefined]>} */
  const toolSets = [["no tools", undefined], ["with tools", TOOLS]];
  for (const [label, tools] of toolSets) {
    for (let i = 0; i < 300; i++) for (const f of Object.values(runs)) f(synthetic, tools);
    const us = { A: 0, B: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of r % 2 ? AB.toReversed() : AB) {
        const c0 = process.cpuUsage();
        for (let i = 0; i < BATCH; i++) runs[k](synthetic, tools);
        const c = process.cpuUsage(c0);
        us[k] += c.user + c.system;
      }
    }
    const ms = (/** @type {"A" | "B"} */ k) => us[k] / 1000 / (ROUNDS * BATCH);
    console.log(`pure pipeline, 1,000-token answer ${label}: A (${flags.a}) ${ms("A").toFixed(3)} ms, B (${flags.b ?? "working tree"}) ${ms("B").toFixed(3)} ms, B/A ${(ms("B") / ms("A")).toFixed(3)}`);
  }
}

try {
  await { cpu, latency, pipeline }[measure]();
} finally {
  for (const c of cleanups) c();
}
