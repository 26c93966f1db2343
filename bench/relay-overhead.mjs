#!/usr/bin/env node
// Relay overhead per chunk: how much later a chunk reaches an HTTP client through the whole browser
// path (session WebSocket → SessionHub Durable Object → Worker: normalization, encoding → SSE) than the
// same chunk reaches a consumer of the engine in the same process. The Worker runs as `wrangler deploy
// --dry-run` builds it, under Miniflare (one workerd, no dev proxy in front: the default) or wrangler's
// dev pipeline (unstable_startWorker, without file watching); the session client is
// test/support/relay-client.mjs. Alongside: the same chunks from an HTTP upstream through the same
// Worker, and through a bare pass-through Worker (the runtime's floor). All clocks are this process's.
//   npx node bench/relay-overhead.mjs [--requests 20] [--chunks 50] [--gap-ms 10] [--runtime miniflare|dev] [--write docs/benchmarks.md]
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createServer } from "node:http";
import { startRelayClient } from "../test/support/relay-client.mjs";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { unstable_startWorker } from "wrangler";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { miniflarePassthrough } from "./overhead/runtimes.mjs";

const { values: flags } = parseArgs({
  options: {
    requests: { type: "string", default: "20" },
    chunks: { type: "string", default: "50" },
    "gap-ms": { type: "string", default: "10" },
    write: { type: "string" },
    runtime: { type: "string", default: "miniflare" },
  },
});
const REQUESTS = Number(flags.requests);
const CHUNKS = Number(flags.chunks);
const GAP_MS = Number(flags["gap-ms"]);
const WRITE = flags.write ?? null;
/** `miniflare`: one workerd, no dev proxy in front (closer to production); `dev`: wrangler's dev pipeline. */
const RUNTIME = flags.runtime;
const clock = () => performance.now();
const MODEL = "Bench-q4f32_1-MLC";
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A chat.completion.chunk as web-llm yields it (the fields the bench writes).
 * @typedef {{ id: string, model: string, object: string, created: number,
 *   choices: Array<{ delta: { content?: string, role?: string }, finish_reason: string | null, index: number, logprobs?: null }> }} BenchChunk
 */

/**
 * A chunk's key (`<request key>:<i>`) with the time it was yielded or sent, or it arrived.
 * @typedef {Map<string, number>} SentAt
 * @typedef {Array<[string, number]>} Arrivals
 * @typedef {{ url: string, stop(): Promise<void> }} Proxy
 */

/**
 * An engine with web-llm's chunk shapes whose chunks say when they were yielded.
 * @param {SentAt} sentAt
 */
function benchEngine(sentAt) {
  return {
    interruptGenerate() {},
    chat: {
      completions: {
        /** @param {{ messages: Array<{ role: string, content: string }> }} req */
        async create(req) {
          return (/** @returns {AsyncGenerator<BenchChunk>} */ async function* () {
            const base = { id: crypto.randomUUID(), model: MODEL, object: "chat.completion.chunk", created: 0 };
            for (let i = 0; i < CHUNKS; i++) {
              await sleep(GAP_MS);
              sentAt.set(`${req.messages.at(-1)?.content}:${i}`, clock());
              yield { ...base, choices: [{ delta: { content: ` tok${i}.`, role: "assistant" }, finish_reason: null, index: 0, logprobs: null }] };
            }
            yield { ...base, choices: [{ delta: {}, finish_reason: "stop", index: 0 }] };
          })();
        },
      },
    },
  };
}

/**
 * @param {number[]} xs
 * @param {number} p
 */
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/**
 * One request straight from the engine in this process: when its chunks arrived.
 * @param {SentAt} sentAt
 * @param {string} key
 * @returns {Promise<Arrivals>}
 */
async function directOnce(sentAt, key) {
  /** @type {Arrivals} */
  const arrived = [];
  const it = await benchEngine(sentAt).chat.completions.create({ messages: [{ role: "user", content: key }] });
  for await (const chunk of it) {
    const m = /tok(\d+)\./.exec(chunk.choices[0]?.delta?.content ?? "");
    if (m) arrived.push([`${key}:${m[1]}`, clock()]);
  }
  return arrived;
}

/**
 * A llama-server stand-in: the same chunks, paced the same, as SSE over HTTP.
 * @param {SentAt} sentAt
 * @returns {Promise<import("node:http").Server>}
 */
function sseUpstream(sentAt) {
  const server = createServer(async (req, res) => {
    let body = "";
    for await (const b of req) body += b;
    if (req.method !== "POST") {
      // The health hub's probes (/health, /slots, /metrics): a healthy idle server.
      res.writeHead(req.url === "/health" ? 200 : 501, { "content-type": "application/json" });
      return res.end(req.url === "/health" ? '{"status":"ok"}' : "{}");
    }
    const key = JSON.parse(body).messages.at(-1).content;
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (let i = 0; i < CHUNKS; i++) {
      await sleep(GAP_MS);
      sentAt.set(`${key}:${i}`, clock());
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: ` tok${i}.` }, finish_reason: null }] })}\n\n`);
    }
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

/**
 * @param {Record<string, string>} vars
 * @returns {Promise<Proxy>}
 */
async function startDev(vars) {
  const bindings = Object.fromEntries(Object.entries(vars).map(([k, value]) => [k, { type: "plain_text", value }]));
  const worker = await unstable_startWorker({
    config: "wrangler.toml",
    bindings,
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: false, watch: false, logLevel: "warn" },
  });
  await worker.ready;
  return { url: (await worker.url).origin, stop: () => worker.dispose() };
}

/**
 * @param {Record<string, string>} vars
 * @returns {Promise<Proxy>}
 */
async function startMiniflare(vars) {
  mkdirSync(".wrangler", { recursive: true });
  const out = mkdtempSync(join(".wrangler", "bench-"));
  execFileSync(process.execPath, ["node_modules/wrangler/bin/wrangler.js", "deploy", "--dry-run", "--outdir", out], { stdio: "ignore" });
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      modules: true,
      scriptPath: join(out, "index.js"),
      compatibilityDate: "2026-10-01",
      // Every Durable Object the Worker binds (wrangler.toml), as a deployment has them.
      durableObjects: {
        SESSION_HUB: { className: "SessionHub", useSQLite: true },
        HEALTH_HUB: { className: "HealthHub", useSQLite: true },
        KEY_STORE: { className: "KeyStore", useSQLite: true },
        KEY_GATE: { className: "KeyGate", useSQLite: true },
        AUTH_GUARD: { className: "AuthGuard", useSQLite: true },
      },
      bindings: vars,
    }),
  );
  return { url: (await mf.ready).origin, stop: async () => { await mf.dispose(); rmSync(out, { recursive: true, force: true }); } };
}

/**
 * One streamed request of `model` through a running proxy: when each chunk arrived (`<key>:<i>` → ms).
 * @param {Proxy} proxy
 * @param {string} model
 * @param {string} key
 * @returns {Promise<Arrivals>}
 */
async function proxyOnce(proxy, model, key) {
  /** @type {Arrivals} */
  const arrived = [];
  const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: key }] }) });
  if (!res.ok || !res.body) throw new Error(`${model}: HTTP ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  let buf = "";
  for await (const bytes of res.body) {
    const now = clock();
    buf += decoder.decode(bytes, { stream: true });
    let at;
    while ((at = buf.indexOf("\n\n")) >= 0) {
      const frame = buf.slice(0, at);
      buf = buf.slice(at + 2);
      const m = /tok(\d+)\./.exec(frame);
      if (m) arrived.push([`${key}:${m[1]}`, now]);
    }
  }
  return arrived;
}

/** The serving side: the SSE upstream and, once the Worker runs, the session client with its engine. */
async function startSources() {
  /** @type {SentAt} */
  const sent = new Map();
  const upstream = await sseUpstream(sent);
  /** @type {Awaited<ReturnType<typeof startRelayClient>> | undefined} */
  let session;
  return {
    port: /** @type {import("node:net").AddressInfo} */ (upstream.address()).port,
    sent,
    startSession: async (/** @type {string} */ baseUrl, /** @type {string} */ token) => void (session = await startRelayClient({ baseUrl, token, models: [MODEL], engine: benchEngine(sent) })),
    close: async () => {
      await session?.close();
      upstream.close();
    },
  };
}

async function throughProxy() {
  const token = "bench-serve-token";
  const sources = await startSources();
  const config = { models: { b: { targets: [{ kind: "browser", model: MODEL }] }, h: { targets: [{ kind: "llama", url: `http://127.0.0.1:${sources.port}` }] } } };
  const vars = { SERVE_TOKEN: token, SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify(config) };
  const proxy = RUNTIME === "dev" ? await startDev(vars) : await startMiniflare(vars);
  for (let i = 0; i < 50 && (await fetch(`${proxy.url}/health`).catch(() => null))?.status !== 200; i++) await sleep(100);
  await sources.startSession(proxy.url, token);
  // The runtime's floor: a bare Worker that returns the upstream's body as it arrives (Miniflare).
  const floor = RUNTIME === "dev" ? null : await miniflarePassthrough({ UPSTREAM: `http://127.0.0.1:${sources.port}` });
  // Every path once per round, in a new shuffled order each round, so the machine's noise (the cores
  // are shared) falls on all of them alike; the first two rounds warm up and are not counted.
  /** @type {SentAt} */
  const directSent = new Map();
  /** @type {Record<string, (key: string) => Promise<Arrivals>>} */
  const paths = { direct: (key) => directOnce(directSent, key), http: (key) => proxyOnce(proxy, "h", key), relay: (key) => proxyOnce(proxy, "b", key), ...(floor ? { floor: (key) => proxyOnce(floor, "f", key) } : {}) };
  /** @type {Record<string, Arrivals>} */
  const got = Object.fromEntries(Object.keys(paths).map((n) => [n, []]));
  let seed = 11;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296;
  try {
    for (let r = -2; r < REQUESTS; r++) {
      const order = Object.keys(paths);
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(rnd() * (i + 1));
        [order[i], order[j]] = [order[j], order[i]];
      }
      for (const n of order) {
        const xs = await paths[n](`${n}${r}`);
        if (r >= 0) got[n].push(...xs);
      }
    }
    /** The chunk's latency: from when the engine yielded it (direct) or the upstream sent it. */
    const latency = (/** @type {SentAt} */ sent, /** @type {[string, number]} */ [key, at]) => {
      const t = sent.get(key);
      if (t === undefined) throw new Error(`chunk ${key} arrived but was never sent`);
      return at - t;
    };
    return Object.fromEntries(Object.entries(got).map(([n, xs]) => [n, xs.map((x) => latency(n === "direct" ? directSent : sources.sent, x))]));
  } finally {
    await proxy.stop();
    await floor?.stop();
    await sources.close();
  }
}

const { direct: d, http, relay: rl, floor } = await throughProxy();
const row = (/** @type {string} */ name, /** @type {number[]} */ xs) => `| ${name} | ${xs.length} | ${pct(xs, 50).toFixed(3)} | ${pct(xs, 99).toFixed(3)} | ${Math.max(...xs).toFixed(3)} |`;
const table = [
  "| path | chunks | p50 ms | p99 ms | max ms |",
  "|---|---|---|---|---|",
  row("direct: in-process engine → consumer", d),
  ...(floor ? [row("runtime floor: SSE server → bare pass-through Worker → SSE client (miniflare)", floor)] : []),
  row(`HTTP upstream: SSE server → Worker → SSE client (${RUNTIME})`, http),
  row(`relayed: session → SessionHub → Worker → SSE client (${RUNTIME})`, rl),
].join("\n");
const summary = [
  `Relay overhead per chunk against the direct engine: p50 ${(pct(rl, 50) - pct(d, 50)).toFixed(2)} ms, p99 ${(pct(rl, 99) - pct(d, 99)).toFixed(2)} ms.`,
  `The relay hop alone (relayed minus the same chunks from an HTTP upstream through the same runtime): p50 ${(pct(rl, 50) - pct(http, 50)).toFixed(2)} ms, p99 ${(pct(rl, 99) - pct(http, 99)).toFixed(2)} ms.`,
  ...(floor ? [`Against the runtime floor (relayed minus a bare pass-through Worker in the same runtime): p50 ${(pct(rl, 50) - pct(floor, 50)).toFixed(2)} ms, p99 ${(pct(rl, 99) - pct(floor, 99)).toFixed(2)} ms.`] : []),
  `(${REQUESTS} requests × ${CHUNKS} chunks, ${GAP_MS} ms apart, all paths interleaved, one request each per round in a shuffled order, after 2 warm-up rounds; runtime: ${RUNTIME}.)`,
].join(" ");
console.log(table);
console.log(summary);

if (WRITE) {
  // Replaces the latest run between the markers in the "Relay overhead" section; the history and the
  // reading around it are written by hand.
  const text = readFileSync(WRITE, "utf8");
  const start = "<!-- relay-overhead:start (written by bench/relay-overhead.mjs --write) -->";
  const end = "<!-- relay-overhead:end -->";
  const i = text.indexOf(start);
  const j = text.indexOf(end);
  if (i < 0 || j < i) throw new Error(`${WRITE} has no ${start} … ${end} block to write into`);
  const load = loadavg().map((x) => x.toFixed(2)).join(" ");
  const block = `${start}\n\n\`npx node bench/relay-overhead.mjs --requests ${REQUESTS} --chunks ${CHUNKS} --gap-ms ${GAP_MS} --runtime ${RUNTIME}\` (${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC, load average ${load}):\n\n${table}\n\n${summary}\n\n${end}`;
  writeFileSync(WRITE, text.slice(0, i) + block + text.slice(j + end.length));
}
