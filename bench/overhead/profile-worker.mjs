#!/usr/bin/env node
// CPU profile of the Switchyard Worker under Miniflare, through workerd's inspector: N requests to the
// fast upstream (bench/overhead/upstream.mjs), one at a time, then the functions by self time.
// The Worker is built unminified (`wrangler deploy --dry-run --minify=false`) so names are readable.
//   npx node bench/overhead/profile-worker.mjs [--requests 2000] [--stream] [--otlp] [--observability <json>] [--top 40] [--out file.cpuprofile]
//   npx node bench/overhead/profile-worker.mjs --stages [--requests 2000] [--write]
// (--otlp: traces exported to an OTLP receiver in the bench upstream; --observability: the configuration's
// section, e.g. '{"log":false}'.) --stages: the latency budget instead (bench/overhead/stages.mjs): the
// isolate's CPU per request by stage of the pipeline, non-stream and stream, with no keys and with a
// key with limits, against each stage's budget; --write puts it in docs/benchmarks.md (stage-budget).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { post } from "./client.mjs";
import { compatOf, durableObjects, freePort, miniflarePassthrough } from "./runtimes.mjs";
import { inspectorSession } from "./inspector.mjs";
import { stageTable, stagesOf } from "./stages.mjs";
import { replaceMarkedBlock } from "../doc-block.mjs";
import { startBenchUpstream } from "./upstream.mjs";
import { cpuNs, workerdPids } from "./workerd-cpu.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const { values: flags } = parseArgs({
  options: {
    requests: { type: "string", default: "2000" },
    stream: { type: "boolean", default: false },
    otlp: { type: "boolean", default: false },
    observability: { type: "string" },
    top: { type: "string", default: "40" },
    out: { type: "string" },
    stages: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
  },
});
const { stream } = flags;
const N = Number(flags.requests);
const ADMIN_TOKEN = `profile-admin-${Math.random().toString(36).slice(2)}`;

/**
 * The profile the inspector answers Profiler.stop with (Chrome DevTools Protocol).
 * @typedef {{ nodes: Array<{ id: number, callFrame: { functionName: string, url: string, lineNumber: number } }>, samples: number[], timeDeltas: number[] }} CpuProfile
 */

mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
const dir = mkdtempSync(join(ROOT, ".wrangler", "profile-"));
execFileSync(process.execPath, [join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", dir, "--minify=false"], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" } });

/**
 * The configuration's `observability` section: --observability, with --otlp's export added.
 * @param {string} upstream
 */
function observabilityOf(upstream) {
  const o = { ...(flags.observability ? JSON.parse(flags.observability) : {}), ...(flags.otlp ? { otlp: { endpoint: `${upstream}/otlp` } } : {}) };
  return Object.keys(o).length ? { observability: o } : {};
}

const up = await startBenchUpstream();
const UP = `http://127.0.0.1:${up.port}`;
const inspectorPort = await freePort();
const mf = new Miniflare(
  convertV4MiniflareOptions({
    host: "127.0.0.1",
    port: await freePort(),
    inspectorPort,
    modules: true,
    scriptPath: join(dir, "index.js"),
    ...compatOf(),
    durableObjects: durableObjects(),
    bindings: { SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { fast: { targets: [{ kind: "llama", url: `${UP}/fast` }] } }, ...observabilityOf(UP) }), LLAMA_URL: UP, ADMIN_TOKEN },
  }),
);
try {
  const origin = (await mf.ready).origin;
  const url = `${origin}/v1/chat/completions`;
  const inspector = await inspectorSession(inspectorPort);
  const { call } = inspector;
  await call("Profiler.enable");
  await call("Profiler.setSamplingInterval", { interval: 100 });

  /**
   * N requests of `stream` with `headers`, after 300 unprofiled ones: the profile and the client's wall time per request.
   * @param {boolean} stream @param {Record<string, string>} headers
   */
  const profileRun = async (stream, headers = {}) => {
    const body = { model: "fast", messages: [{ role: "user", content: "hi" }], stream };
    const probe = await post(url, body, { headers });
    if (probe.status !== 200 || !probe.done) throw new Error(`the Worker did not answer: ${probe.status} ${probe.text}`);
    for (let i = 0; i < 300; i++) await post(url, body, { headers });
    // The same requests unprofiled first: workerd's CPU per request (all its threads), which the
    // profiler's own cost does not inflate.
    const pids = [...workerdPids()];
    const cpu0 = pids.reduce((s, p) => s + cpuNs(p), 0);
    for (let i = 0; i < N; i++) await post(url, body, { headers });
    const cpuUs = (pids.reduce((s, p) => s + cpuNs(p), 0) - cpu0) / 1000 / N;
    await call("Profiler.start");
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await post(url, body, { headers });
    const wall = performance.now() - t0;
    const { profile } = /** @type {{ profile: CpuProfile }} */ (await call("Profiler.stop"));
    return { profile, wallMs: wall / N, cpuUs };
  };

  if (flags.stages) {
    // No keys first (open mode); then a key with every limit, far from them, in the same isolate.
    const runs = [];
    runs.push({ name: "no keys", stream: false, ...(await profileRun(false)) });
    runs.push({ name: "no keys", stream: true, ...(await profileRun(true)) });
    const created = await fetch(`${origin}/v1/admin/keys`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ name: "budget", scopes: ["chat"], limits: { rpm: 1_000_000, concurrency: 1000, tokensPerDay: 1_000_000_000 } }),
    });
    const { key } = /** @type {{ key?: string }} */ (await created.json());
    if (!key) throw new Error(`creating a key: HTTP ${created.status}`);
    const auth = { authorization: `Bearer ${key}` };
    runs.push({ name: "a key with limits", stream: false, ...(await profileRun(false, auth)) });
    runs.push({ name: "a key with limits", stream: true, ...(await profileRun(true, auth)) });
    inspector.close();
    // The runtime's floor, the same way: the bare pass-through Worker (bench/passthrough-worker) in a
    // workerd of its own, its CPU per request unprofiled, non-stream and stream.
    const before = workerdPids();
    const bare = await miniflarePassthrough({ UPSTREAM: UP });
    /** @type {Record<string, number>} */
    const bareUs = {};
    try {
      const pids = [...workerdPids()].filter((p) => !before.has(p));
      const bareUrl = `${bare.url}/fast/v1/chat/completions`;
      for (const s of [false, true]) {
        const body = { model: "fast", messages: [{ role: "user", content: "hi" }], stream: s };
        for (let i = 0; i < 300; i++) await post(bareUrl, body);
        const cpu0 = pids.reduce((sum, p) => sum + cpuNs(p), 0);
        for (let i = 0; i < N; i++) await post(bareUrl, body);
        bareUs[String(s)] = (pids.reduce((sum, p) => sum + cpuNs(p), 0) - cpu0) / 1000 / N;
      }
    } finally {
      await bare.stop();
    }
    const bundle = readFileSync(join(dir, "index.js"), "utf8");
    const measured = runs.map((r) => ({ name: r.name, stream: r.stream, wallMs: r.wallMs, cpuUs: r.cpuUs, bareUs: bareUs[String(r.stream)], stages: stagesOf(r.profile, bundle, N) }));
    const rev = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const out = stageTable(measured, { requests: N, rev, command: `npx node bench/overhead/profile-worker.mjs --stages --requests ${N}${flags.write ? " --write" : ""}` });
    console.log(out);
    if (flags.write) {
      const path = join(ROOT, "docs/benchmarks.md");
      const start = "<!-- stage-budget:start (written by npx node bench/overhead/profile-worker.mjs --stages --write) -->";
      const end = "<!-- stage-budget:end -->";
      writeFileSync(path, replaceMarkedBlock(readFileSync(path, "utf8"), start, end, `${start}\n\n${out}\n\n${end}`, "## The proxy's own work, stage by stage"));
    }
  } else {
    const { profile, wallMs } = await profileRun(stream);
    inspector.close();
    if (flags.out) writeFileSync(flags.out, JSON.stringify(profile));

    // Self time per function (the Worker's isolate only; "(idle)" is time spent waiting).
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    /** @type {Map<string, number>} */
    const self = new Map();
    let total = 0;
    profile.samples.forEach((nodeId, i) => {
      const dt = profile.timeDeltas[i] ?? 0;
      total += dt;
      const node = byId.get(nodeId);
      if (!node) throw new Error(`a sample names node ${nodeId}, which the profile does not have`);
      const f = node.callFrame;
      const key = `${f.functionName || "(anonymous)"} ${f.url ? `${f.url.split("/").pop()}:${f.lineNumber + 1}` : ""}`.trim();
      self.set(key, (self.get(key) ?? 0) + dt);
    });
    console.log(`${N} ${stream ? "stream" : "non-stream"} requests, ${wallMs.toFixed(3)} ms each (client included)`);
    for (const [k, t] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(flags.top))) console.log(`${((100 * t) / total).toFixed(1).padStart(5)} %  ${k}`);
  }
} finally {
  await mf.dispose();
  await up.close();
  rmSync(dir, { recursive: true, force: true });
}
