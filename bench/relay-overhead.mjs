#!/usr/bin/env node
// Relay overhead per chunk: how much later a chunk reaches an HTTP client through the whole browser
// path (session WebSocket → SessionHub Durable Object → Worker: normalization, encoding → SSE) than the
// same chunk reaches a consumer of the engine in the same process. Runs the Worker with wrangler's
// unstable_startWorker (the wrangler dev pipeline on real workerd, without file watching, so edits
// elsewhere cannot reload it mid-run) and a session client from test/support/relay-client.mjs; both
// clocks are this process's.
//   npx node bench/relay-overhead.mjs [--requests 20] [--chunks 50] [--gap-ms 10] [--runtime miniflare|dev] [--write docs/benchmarks.md]
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { startRelayClient } from "../test/support/relay-client.mjs";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { unstable_startWorker } from "wrangler";
import { miniflarePassthrough } from "./overhead/runtimes.mjs";

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const REQUESTS = Number(arg("requests", 20));
const CHUNKS = Number(arg("chunks", 50));
const GAP_MS = Number(arg("gap-ms", 10));
const WRITE = arg("write", null);
/** `miniflare`: one workerd, no dev proxy in front (closer to production); `dev`: wrangler's dev pipeline. */
const RUNTIME = arg("runtime", "miniflare");
const MODEL = "Bench-q4f32_1-MLC";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** An engine with web-llm's chunk shapes whose chunks say when they were yielded. */
function benchEngine(sentAt) {
  return {
    interruptGenerate() {},
    chat: {
      completions: {
        async create(req) {
          return (async function* () {
            const base = { id: crypto.randomUUID(), model: MODEL, object: "chat.completion.chunk", created: 0 };
            for (let i = 0; i < CHUNKS; i++) {
              await sleep(GAP_MS);
              sentAt.set(`${req.messages.at(-1).content}:${i}`, performance.now());
              yield { ...base, choices: [{ delta: { content: ` tok${i}.`, role: "assistant" }, finish_reason: null, index: 0, logprobs: null }] };
            }
            yield { ...base, choices: [{ delta: {}, finish_reason: "stop", index: 0 }] };
          })();
        },
      },
    },
  };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

async function direct() {
  const sentAt = new Map();
  const lat = [];
  for (let r = 0; r < REQUESTS; r++) {
    const it = await benchEngine(sentAt).chat.completions.create({ messages: [{ role: "user", content: `d${r}` }] });
    for await (const chunk of it) {
      const m = /tok(\d+)\./.exec(chunk.choices[0]?.delta?.content ?? "");
      if (m) lat.push(performance.now() - sentAt.get(`d${r}:${m[1]}`));
    }
  }
  return lat;
}

/** A llama-server stand-in: the same chunks, paced the same, as SSE over HTTP. */
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
      sentAt.set(`${key}:${i}`, performance.now());
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: ` tok${i}.` }, finish_reason: null }] })}\n\n`);
    }
    res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

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

/** Per-chunk latency of `model` through the running proxy, measured against `sentAt`. */
async function measure(proxy, model, sentAt, prefix) {
  const lat = [];
  for (let r = -2; r < REQUESTS; r++) {
    const key = `${prefix}${r}`;
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: key }] }) });
    if (!res.ok) throw new Error(`${model}: HTTP ${res.status} ${await res.text()}`);
    const decoder = new TextDecoder();
    let buf = "";
    for await (const bytes of res.body) {
      const now = performance.now();
      buf += decoder.decode(bytes, { stream: true });
      let at;
      while ((at = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, at);
        buf = buf.slice(at + 2);
        const m = /tok(\d+)\./.exec(frame);
        if (m && r >= 0) lat.push(now - sentAt.get(`${key}:${m[1]}`)); // the first two requests warm up
      }
    }
  }
  return lat;
}

async function throughProxy() {
  const token = "bench-serve-token";
  const sentAt = new Map();
  const upstream = await sseUpstream(sentAt);
  const config = { models: { b: { targets: [{ kind: "browser", model: MODEL }] }, h: { targets: [{ kind: "llama", url: `http://127.0.0.1:${upstream.address().port}` }] } } };
  const vars = { SERVE_TOKEN: token, SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify(config) };
  const proxy = RUNTIME === "dev" ? await startDev(vars) : await startMiniflare(vars);
  for (let i = 0; i < 50 && (await fetch(`${proxy.url}/health`).catch(() => null))?.status !== 200; i++) await sleep(100);
  const session = await startRelayClient({ baseUrl: proxy.url, token, models: [MODEL], engine: benchEngine(sentAt) });
  // The runtime's floor: a bare Worker that returns the upstream's body as it arrives (Miniflare).
  const floor = RUNTIME === "dev" ? null : await miniflarePassthrough({ UPSTREAM: `http://127.0.0.1:${upstream.address().port}` });
  try {
    return {
      http: await measure(proxy, "h", sentAt, "h"),
      relay: await measure(proxy, "b", sentAt, "b"),
      ...(floor ? { floor: await measure(floor, "f", sentAt, "f") } : {}),
    };
  } finally {
    await session.close();
    await proxy.stop();
    await floor?.stop();
    upstream.close();
  }
}

const d = await direct();
const { http, relay: rl, floor } = await throughProxy();
const row = (name, xs) => `| ${name} | ${xs.length} | ${pct(xs, 50).toFixed(3)} | ${pct(xs, 99).toFixed(3)} | ${Math.max(...xs).toFixed(3)} |`;
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
  `(${REQUESTS} requests × ${CHUNKS} chunks, ${GAP_MS} ms apart, after 2 warm-up requests per path; runtime: ${RUNTIME}.)`,
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
