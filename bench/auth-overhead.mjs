#!/usr/bin/env node
// What authentication and limits add to a request: the same requests, sequentially, with no keys
// (dev open mode: no auth work), with a key without limits (hash + per-isolate cached lookup, no
// Durable Object call), and with a key with limits (plus the awaited KeyGate admission and, for a
// generating request, a stream slot). Runs the Worker with wrangler's unstable_startWorker (the
// wrangler dev pipeline on real workerd, no file watching) against a tiny local upstream.
// It prints the table; docs/benchmarks.md ("Auth and limits", "Added latency") quotes it by hand.
//   npx node bench/auth-overhead.mjs [--requests 400]
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { unstable_startWorker } from "wrangler";

const { values: flags } = parseArgs({ options: { requests: { type: "string", default: "400" } } });
const N = Number(flags.requests);
const ADMIN_TOKEN = "bench-admin-" + Math.random().toString(36).slice(2);

/**
 * @typedef {{ name: string, base: string, key: string | null }} Scenario
 * @typedef {(base: string, key: string | null) => Promise<Response>} Send
 */

/** @returns {Promise<import("node:http").Server>} */
function startUpstream() {
  const frame = (/** @type {unknown} */ o) => `data: ${JSON.stringify(o)}\n\n`;
  const server = createServer(async (req, res) => {
    for await (const _ of req);
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(frame({ choices: [{ index: 0, delta: { role: "assistant", content: "hi" }, finish_reason: null }] }));
    res.write(frame({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }));
    res.write(frame({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
    res.end("data: [DONE]\n\n");
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
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
 * Sends the scenarios' requests in rotation (so drift on a busy machine hits all alike); times each.
 * @param {Scenario[]} scenarios
 * @param {Send} send
 */
async function timeInterleaved(scenarios, send) {
  const times = scenarios.map(() => /** @type {number[]} */ ([]));
  for (let i = 0; i < N + 30; i++) {
    for (const [j, s] of scenarios.entries()) {
      const t0 = performance.now();
      const res = await send(s.base, s.key);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      if (i >= 30) times[j].push(performance.now() - t0);
    }
  }
  return times.map((t) => ({ p50: pct(t, 50), p99: pct(t, 99) }));
}

const headers = (/** @type {string | null} */ key) => ({ "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) });
/** @type {Record<string, Send>} */
const ROUTES = {
  "GET /v1/models": (base, key) => fetch(`${base}/v1/models`, { headers: headers(key) }),
  "POST /v1/chat/completions (non-stream)": (base, key) =>
    fetch(`${base}/v1/chat/completions`, { method: "POST", headers: headers(key), body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }) }),
};

const upstream = await startUpstream();
const config = { models: { m: { targets: [{ kind: "llama", url: `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (upstream.address()).port}` }] } } };
/** @param {string} name */
async function startProxy(name) {
  const vars = { SWITCHYARD_ENV: "dev", ADMIN_TOKEN, SWITCHYARD_CONFIG: JSON.stringify(config), KEY_STORE_NAME: `bench-${name}-${Date.now()}` };
  const worker = await unstable_startWorker({
    config: "wrangler.toml",
    bindings: Object.fromEntries(Object.entries(vars).map(([k, value]) => [k, { type: "plain_text", value }])),
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: false, watch: false, logLevel: "warn" },
  });
  await worker.ready;
  return { base: (await worker.url).origin, stop: () => worker.dispose() };
}

// Two Workers side by side: one with no keys (open), one with keys.
const open = await startProxy("open");
const keyed = await startProxy("keyed");
/** @type {Record<string, Record<string, { p50: number, p99: number }>>} */
const results = {};
try {
  /**
   * A new key's secret (POST /v1/admin/keys).
   * @param {Record<string, unknown>} body
   */
  const create = async (body) => {
    const res = await fetch(`${keyed.base}/v1/admin/keys`, { method: "POST", headers: headers(ADMIN_TOKEN), body: JSON.stringify(body) });
    const { key } = /** @type {{ key?: string }} */ (await res.json());
    if (!key) throw new Error(`creating a key: HTTP ${res.status}`);
    return key;
  };
  const plain = await create({ name: "plain", scopes: ["chat"] });
  const limited = await create({ name: "limited", scopes: ["chat"], limits: { rpm: 1_000_000, concurrency: 1000, tokensPerDay: 1_000_000_000 } });
  /** @type {Scenario[]} */
  const scenarios = [
    { name: "no keys (open)", base: open.base, key: null },
    { name: "key, no limits", base: keyed.base, key: plain },
    { name: "key with rpm, concurrency, tokens/day", base: keyed.base, key: limited },
  ];
  for (const [route, send] of Object.entries(ROUTES)) {
    const t = await timeInterleaved(scenarios, send);
    results[route] = Object.fromEntries(scenarios.map((s, i) => [s.name, t[i]]));
  }
} finally {
  await Promise.all([open.stop(), keyed.stop()]);
  upstream.close();
}

const lines = [];
for (const [route, rows] of Object.entries(results)) {
  const open = rows["no keys (open)"];
  lines.push(`| ${route} | | | |`);
  for (const [name, r] of Object.entries(rows)) {
    const added = name === "no keys (open)" ? "—" : `+${(r.p50 - open.p50).toFixed(2)} / +${(r.p99 - open.p99).toFixed(2)}`;
    lines.push(`| ${name} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${added} |`);
  }
}
const table = ["| scenario | p50 ms | p99 ms | added p50 / p99 ms |", "|---|---|---|---|", ...lines].join("\n");
console.log(`${N} sequential requests per row (rows interleaved) after 30 warm-up rounds\n\n${table}`);
