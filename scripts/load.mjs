#!/usr/bin/env node
// Load test (outside CI): N concurrent streaming chat requests for D seconds through `wrangler dev`
// (the launcher, real workerd) to a local upstream, keeping N in flight the whole time. Reports
// throughput, errors, latency, and every 10 s the workerd processes' open file descriptors and
// resident memory and the established TCP connections to the upstream; then checks that they return
// to their baseline after the run (no leaked connections or sockets). Loopback only, bounded loops.
//
//   npm run load                                   1,000 streams, 60 s, fast Node fake upstream
//   npm run load -- --upstream llama --concurrency 16 --duration 60     the real llama-server (-np 4)
//   options: --concurrency N --duration S --tokens T (fake: tokens per answer, default 20) --gap MS
//   --worker passthrough (a bare pass-through Worker instead of Switchyard: the runtime's floor)
//   --rounds R (default 2: the same load twice on one wrangler dev, to tell a leak from a warm heap)
//   (fake: ms between tokens, default 1500: a slow generation, so 1,000 streams are in flight at once
//   without the fake outrunning two shared cores) --heartbeat MS (timeouts.heartbeatMs, default 2000)
import { execFileSync, execSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { startSwitchyard } from "../test/support/switchyard-dev.mjs";
import { freePort, startLlamaServer } from "../test/support/llama-server.mjs";

const { values: flags } = parseArgs({
  options: {
    upstream: { type: "string", default: "fake" },
    concurrency: { type: "string" },
    duration: { type: "string", default: "60" },
    tokens: { type: "string", default: "20" },
    gap: { type: "string", default: "1500" },
    heartbeat: { type: "string", default: "2000" },
    rounds: { type: "string", default: "2" },
    worker: { type: "string", default: "switchyard" },
  },
});
const upstreamKind = flags.upstream;
const concurrency = Number(flags.concurrency ?? (upstreamKind === "fake" ? 1000 : 16));
const durationS = Number(flags.duration);
const tokens = Number(flags.tokens);
const gapMs = Number(flags.gap);
const heartbeatMs = Number(flags.heartbeat);
const rounds = Number(flags.rounds);
const log = (/** @type {string} */ s) => console.log(s);

/**
 * A fast fake llama-server: `tokens` content frames `gapMs` apart, finish, usage, [DONE]. No recording.
 * @returns {Promise<{ port: number, url: string, stop(): Promise<void> }>}
 */
function startFakeLlama() {
  const frame = (/** @type {Record<string, unknown>} */ delta, /** @type {string | null} */ finish = null) => `data: ${JSON.stringify({ choices: [{ finish_reason: finish, index: 0, delta }], created: 1, id: "chatcmpl-load", model: "m", system_fingerprint: "fake", object: "chat.completion.chunk" })}\n\n`;
  const server = createServer(async (req, res) => {
    const path = req.url ?? "/";
    if (req.method === "GET" && path.endsWith("/health")) return res.end('{"status":"ok"}');
    if (req.method === "GET" && path.endsWith("/slots")) return res.end("[]");
    if (req.method === "GET" && path.endsWith("/metrics")) return res.writeHead(501).end();
    if (req.method === "GET") return res.writeHead(404).end();
    for await (const _ of req);
    res.writeHead(200, { "content-type": "text/event-stream" });
    let closed = false;
    res.on("close", () => (closed = true));
    res.write(frame({ role: "assistant", content: null }));
    for (let i = 0; i < tokens && !closed; i++) {
      res.write(frame({ content: `t${i} ` }));
      await new Promise((r) => setTimeout(r, gapMs));
    }
    res.write(frame({}, "stop"));
    res.write(`data: ${JSON.stringify({ choices: [], usage: { completion_tokens: tokens, prompt_tokens: 3, total_tokens: tokens + 3 } })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  server.keepAliveTimeout = 5000;
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
      resolve({ port, url: `http://127.0.0.1:${port}`, stop: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))) });
    }),
  );
}

/**
 * workerd processes of the launcher's process group: fds and RSS.
 * @param {number} pgid
 */
function workerdStats(pgid) {
  let fds = 0;
  let rssKb = 0;
  const pids = execFileSync("ps", ["-o", "pid=,comm=", "-g", String(pgid)], { encoding: "utf8" })
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([pid, comm]) => pid && comm?.startsWith("workerd"));
  for (const [pid] of pids) {
    try {
      fds += readdirSync(`/proc/${pid}/fd`).length;
      rssKb += Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
    } catch {}
  }
  return { processes: pids.length, fds, rssMb: Math.round(rssKb / 1024) };
}

/**
 * Established TCP connections to the upstream port (both ends are on this machine: count one side).
 * @param {number} port
 */
function upstreamSockets(port) {
  const out = execFileSync("ss", ["-Htn", "state", "established", `( dport = :${port} )`], { encoding: "utf8" });
  return out.split("\n").filter(Boolean).length;
}

// `wrangler dev` reloads on any source change, which drops every open stream: run it from a snapshot
// of the last commit (git archive HEAD) so that edits in the working tree cannot disturb the run.
const repo = resolve(import.meta.dirname, "..");
const snapshot = mkdtempSync(join(tmpdir(), "switchyard-load-"));
execSync(`git archive HEAD | tar -x -C ${JSON.stringify(snapshot)}`, { cwd: repo });
symlinkSync(join(repo, "node_modules"), join(snapshot, "node_modules"));
process.chdir(snapshot);

const upstream = upstreamKind === "llama" ? await startLlamaServer({ parallel: 4, args: ["-t", "1"] }) : await startFakeLlama();
// --worker passthrough: the same load through a bare pass-through Worker (bench/passthrough-worker)
// under wrangler dev instead of Switchyard — the runtime's own memory and descriptor behaviour, to
// compare Switchyard's against.
const workerKind = flags.worker;
let inspectorPort = await freePort();
/** @type {{ url: string, port: number, logs(): string, stop(): Promise<void> }} */
let proxy;
if (workerKind === "passthrough") {
  const { devPassthrough } = await import("../bench/overhead/runtimes.mjs");
  const dev = await devPassthrough({ dir: mkdtempSync(join(tmpdir(), "switchyard-load-pt-")) }, { UPSTREAM: upstream.url, LLAMA: upstream.url });
  inspectorPort = dev.inspectorPort;
  proxy = { url: dev.url, port: Number(new URL(dev.url).port), logs: () => "", stop: dev.stop };
} else {
  proxy = await startSwitchyard({ args: ["--inspector-port", String(inspectorPort)], vars: { SWITCHYARD_CONFIG: { models: { m: { targets: [{ kind: "llama", url: upstream.url }] } }, timeouts: { heartbeatMs } } } });
}

/**
 * The Worker's V8 heap after a full garbage collection, through wrangler dev's inspector: what the
 * JavaScript holds, as opposed to RSS, which also counts memory the allocator keeps for reuse.
 */
// One inspector connection for the whole run: wrangler's proxy may not answer a second one.
let inspector = /** @type {{ ws: WebSocket, id: number } | null} */ (null);
async function workerHeapMb() {
  if (!inspector) {
    const [target] = /** @type {Array<{ webSocketDebuggerUrl: string }>} */ (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json());
    // wrangler's inspector proxy wants an allowed Origin (a DevTools page's or a local one).
    const ws = new WebSocket(target.webSocketDebuggerUrl, { headers: { origin: "http://127.0.0.1" } });
    await new Promise((res, rej) => (ws.addEventListener("open", res), ws.addEventListener("error", rej)));
    inspector = { ws, id: 0 };
  }
  const session = inspector;
  const { ws } = session;
  // The proxy can drop a message sent while it is still attaching to the runtime: ask again after 2 s.
  /**
   * @param {string} method
   * @returns {Promise<{ usedSize?: number } | null>}
   */
  const once = (method) =>
    new Promise((res) => {
      const mine = ++session.id;
      const on = (/** @type {MessageEvent} */ m) => {
        const d = JSON.parse(m.data);
        if (d.id === mine) (ws.removeEventListener("message", on), clearTimeout(timer), res(d.result));
      };
      const timer = setTimeout(() => (ws.removeEventListener("message", on), res(null)), 2000);
      ws.addEventListener("message", on);
      ws.send(JSON.stringify({ id: mine, method }));
    });
  const call = async (/** @type {string} */ method) => {
    for (let i = 0; i < 5; i++) {
      const r = await once(method);
      if (r) return r;
    }
    return null;
  };
  // The bare pass-through's inspector sometimes stops answering after a round: then no figure.
  if (!(await call("HeapProfiler.collectGarbage"))) return null;
  const usage = await call("Runtime.getHeapUsage");
  return usage?.usedSize !== undefined ? Math.round((usage.usedSize / 1048576) * 10) / 10 : null;
}
const pgid = Number(execFileSync("ps", ["-o", "pgid=", "-p", String(await launcherPid(proxy.port))], { encoding: "utf8" }).trim());

/** @param {number} port */
async function launcherPid(port) {
  // The process listening on the dev port is workerd; its process group is the launcher's.
  const out = execFileSync("ss", ["-Htlnp", `( sport = :${port} )`], { encoding: "utf8" });
  return Number(out.match(/pid=(\d+)/)?.[1]);
}

const grammar = (/** @type {string} */ text) => `root ::= ${JSON.stringify(text)}`;
const WANT = "Sustained load through Switchyard.";
const body = JSON.stringify({
  model: "m",
  stream: true,
  messages: [{ role: "user", content: "load" }],
  ...(upstreamKind === "llama" ? { grammar: grammar(WANT), temperature: 0, max_tokens: 64 } : {}),
});

const stats = {
  ok: 0,
  errors: 0,
  bytes: 0,
  /** @type {number[]} */
  latencies: [],
  /** @type {number[]} */
  firstByte: [],
  /** @type {string[]} */
  errorSamples: [],
};
let inFlight = 0;
let maxInFlight = 0;
let deadline = Infinity;

async function one() {
  const t0 = performance.now();
  inFlight++;
  maxInFlight = Math.max(maxInFlight, inFlight);
  try {
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
    if (!res.body) throw new Error(`HTTP ${res.status} without a body`);
    const reader = res.body.getReader();
    let text = "";
    let first = 0;
    const dec = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!first) first = performance.now() - t0;
      text += dec.decode(value, { stream: true });
    }
    const ok = res.status === 200 && text.endsWith("data: [DONE]\n\n") && !text.includes('"error"');
    if (ok) {
      stats.ok++;
      stats.latencies.push(performance.now() - t0);
      stats.firstByte.push(first);
    } else {
      stats.errors++;
      if (stats.errorSamples.length < 5) stats.errorSamples.push(`${res.status} ${text.slice(-300)}`);
    }
    stats.bytes += text.length;
  } catch (e) {
    stats.errors++;
    if (stats.errorSamples.length < 5) stats.errorSamples.push(String((e instanceof Error && e.cause) || e));
  } finally {
    inFlight--;
  }
}

async function worker() {
  for (let i = 0; i < 100_000 && Date.now() < deadline; i++) await one();
}

/**
 * @param {number[]} xs
 * @param {number} p
 */
const pct = (xs, p) => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]);
};

// Warm up (first request compiles the Worker), then take the baseline.
await one();
stats.ok = 0;
stats.errors = 0;
stats.latencies = [];
stats.firstByte = [];
await new Promise((r) => setTimeout(r, 2000));
const baseline = { ...workerdStats(pgid), sockets: upstreamSockets(upstream.port), heapMb: await workerHeapMb() };
log(`# load: ${concurrency} concurrent streams for ${durationS} s through ${workerKind === "passthrough" ? "a bare pass-through Worker under " : ""}wrangler dev to ${upstreamKind === "llama" ? "llama-server (-np 4)" : `a fake upstream (${tokens} tokens, ${gapMs} ms apart)`}`);
log(`# baseline: workerd processes ${baseline.processes}, fds ${baseline.fds}, rss ${baseline.rssMb} MB, Worker heap after GC ${baseline.heapMb} MB, upstream sockets ${baseline.sockets}`);
/**
 * More fds or upstream sockets than the baseline allows (a few come and go with the runtime's own work).
 * @param {{ fds: number, sockets: number }} base
 * @param {{ fds: number, sockets: number }} now
 */
function leakedFrom(base, now) {
  return now.sockets > base.sockets + 5 || now.fds > base.fds + 50;
}
/** @type {Array<{ errors: number, after: ReturnType<typeof workerdStats> & { sockets: number, heapMb: number | null, settledS: number } } & Record<string, unknown>>} */
const results = [];
for (let round = 1; round <= rounds; round++) {
  stats.ok = 0;
  stats.errors = 0;
  stats.latencies = [];
  stats.firstByte = [];
  maxInFlight = 0;
  /** @type {Array<ReturnType<typeof workerdStats> & { t: number, inFlight: number, ok: number, errors: number, sockets: number }>} */
  const samples = [];
  deadline = Date.now() + durationS * 1000;
  const sampler = setInterval(() => {
    const s = { t: Math.round((durationS * 1000 - (deadline - Date.now())) / 1000), inFlight, ok: stats.ok, errors: stats.errors, ...workerdStats(pgid), sockets: upstreamSockets(upstream.port) };
    samples.push(s);
    log(`#  round ${round} t=${s.t}s in-flight ${s.inFlight} ok ${s.ok} errors ${s.errors} fds ${s.fds} rss ${s.rssMb} MB upstream sockets ${s.sockets}`);
  }, 10_000);
  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  clearInterval(sampler);
  const elapsedS = (Date.now() - started) / 1000;
  // Idle keep-alive connections (the client's, the upstream's) close on their own timers: wait at
  // least 8 s, then up to 30 s for fds and sockets to come back, so a slow close is not taken for a
  // leak and a leak (which never comes back) still is.
  const settleStart = Date.now();
  await new Promise((r) => setTimeout(r, 8000));
  while (Date.now() - settleStart < 30_000 && leakedFrom(baseline, { ...workerdStats(pgid), sockets: upstreamSockets(upstream.port) })) await new Promise((r) => setTimeout(r, 1000));
  const after = { ...workerdStats(pgid), sockets: upstreamSockets(upstream.port), heapMb: await workerHeapMb(), settledS: Math.round((Date.now() - settleStart) / 1000) };
  results.push({
    round,
    upstream: upstreamKind,
    concurrency,
    maxInFlight,
    durationS: Math.round(elapsedS),
    completed: stats.ok,
    errors: stats.errors,
    streamsPerSecond: Math.round(stats.ok / elapsedS),
    latencyMs: { p50: pct(stats.latencies, 50), p99: pct(stats.latencies, 99) },
    firstByteMs: { p50: pct(stats.firstByte, 50), p99: pct(stats.firstByte, 99) },
    baseline,
    peak: { fds: Math.max(...samples.map((s) => s.fds), 0), rssMb: Math.max(...samples.map((s) => s.rssMb), 0), sockets: Math.max(...samples.map((s) => s.sockets), 0) },
    rssMbAt: samples.map((s) => s.rssMb),
    after,
  });
  log(JSON.stringify(results.at(-1)));
}
const after = /** @type {(typeof results)[number]} */ (results.at(-1)).after;
const errors = results.reduce((a, r) => a + r.errors, 0);
writeFileSync(join(tmpdir(), "switchyard-load-wrangler.log"), proxy.logs());
if (stats.errorSamples.length) log(`# error samples:\n${stats.errorSamples.join("\n")}\n# wrangler dev's last output:\n${proxy.logs().slice(-3000)}`);
inspector?.ws.close();
await proxy.stop();
await upstream.stop();
process.chdir(repo);
rmSync(snapshot, { recursive: true, force: true });
const leaked = leakedFrom(baseline, after);
log(`# ${errors === 0 && !leaked ? "PASS" : "FAIL"}: ${errors} errors; fds ${baseline.fds} → ${after.fds}, upstream sockets ${baseline.sockets} → ${after.sockets} (${after.settledS} s after the last round), workerd RSS after each round: ${results.map((r) => r.after.rssMb).join(", ")} MB; Worker heap after GC: ${baseline.heapMb} → ${results.map((r) => r.after.heapMb).join(", ")} MB`);
process.exit(errors === 0 && !leaked ? 0 : 1);
