#!/usr/bin/env node
// A hostile key's worst case (issue 40): the largest growth of workerd's resident memory one
// ordinary `chat` key can cause through each door, against `wrangler dev` (real
// workerd, as the launcher runs it) with ADMIN_TOKEN set and keys made. Loopback only; every door is bounded in count and
// time, and the bench stops by itself. Doors:
//   sockets      --sockets Responses WebSockets opened on the key, each sent one 1 MiB prewarm
//   chain        one socket, --chain prewarms of 3.5 MiB each chained to the last (previous_response_id):
//                what a socket keeps grows with the count, garbage levels off
//   http-bodies  the chain door's bytes over HTTP: --chain POST /v1/responses of 3.5 MiB each, for comparison
//   ws-reader    one socket asks a fast, endless answer and never reads its socket (--hold-s)
//   sse-reader   the same answer over HTTP SSE, its response never read (--hold-s)
//   gzip-layers  a POST whose body is --layers stacked gzip layers of --gzip-mib MiB of zeros
// RSS is the sum of VmRSS over this run's workerd processes (wrangler dev's proxy and the Worker's),
// each door on a Switchyard of its own, sampled every 50 ms after a warm-up; "before" is read as the door starts, "peak" is its highest
// sample until the door ended and its sockets were closed; the largest growth of one process is
// shown too. RSS counts garbage V8 has not collected yet: it is what the process held, not what the
// Worker kept. To measure another revision, run this file from an export of it (its scripts/start.mjs
// is what starts): git archive <rev> | tar -x -C /tmp/rev && ln -s $PWD/node_modules /tmp/rev/ &&
// (cd /tmp/rev && node $OLDPWD/bench/hostile-key.mjs)
//   flock /tmp/sy-servers.lock node bench/hostile-key.mjs [--sockets 150] [--chain 60] [--hold-s 8] [--layers 4] [--gzip-mib 64]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { workerdPids } from "./overhead/workerd-cpu.mjs";
import { openWebSocket, postNeverRead } from "./hostile-key/raw-client.mjs";
import { startFixtureUpstream } from "../test/support/fixture-upstream.mjs";
import { createChatKey, startSwitchyard } from "../test/support/switchyard-dev.mjs";

const { values: flags } = parseArgs({
  options: {
    sockets: { type: "string", default: "150" },
    chain: { type: "string", default: "60" },
    "hold-s": { type: "string", default: "8" },
    layers: { type: "string", default: "4" },
    "gzip-mib": { type: "string", default: "64" },
  },
});
const SOCKETS = Math.min(500, Number(flags.sockets));
const CHAIN = Math.min(100, Number(flags.chain));
const HOLD_MS = Math.min(60, Number(flags["hold-s"])) * 1000;
const LAYERS = Math.min(16, Number(flags.layers));
const GZIP_MIB = Math.min(1024, Number(flags["gzip-mib"]));
const MIB = 1024 * 1024;
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

const rssOf = (/** @type {string} */ pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
};
const rssMiB = () => [...workerdPids()].reduce((sum, pid) => sum + rssOf(pid), 0);
/** Each workerd process's RSS (wrangler dev runs two: its proxy, which relays every byte, and the Worker's). */
const eachMiB = () => new Map([...workerdPids()].map((pid) => [pid, rssOf(pid)]));

const ADMIN_TOKEN = `adm-${crypto.randomUUID()}`;
const fixtures = await startFixtureUpstream();
/** @type {import("../test/support/switchyard-dev.mjs").Switchyard | undefined} */
let proxy;
// The whole run is bounded: whatever a door does, the bench ends.
const watchdog = setTimeout(async () => {
  console.error("hostile-key: out of time; stopping");
  await proxy?.stop();
  process.exit(2);
}, 15 * 60_000);

const user = (/** @type {string} */ text) => [{ type: "message", role: "user", content: [{ type: "input_text", text }] }];

/** A fresh Switchyard with the hostile key (and a teammate's), warmed up: a response over HTTP and one over a socket. */
async function freshSwitchyard() {
  proxy = await startSwitchyard({
    vars: {
      ADMIN_TOKEN,
      // A key store of its own: the keys made here must not lock the checkout's local state (where
      // `npm start` and the end-to-end tests run open, with no keys) behind them.
      KEY_STORE_NAME: `bench-hostile-${Date.now()}`,
      SWITCHYARD_CONFIG: {
        models: {
          say: { targets: [{ kind: "llama", url: `${fixtures.url}/behave/say/ok` }] },
          flood: { targets: [{ kind: "llama", url: `${fixtures.url}/behave/flood/4096` }] },
        },
      },
    },
  });
  const key = await createChatKey(proxy.url, ADMIN_TOKEN, "hostile");
  await createChatKey(proxy.url, ADMIN_TOKEN, "teammate");
  const auth = { authorization: `Bearer ${key}` };
  await fetch(`${proxy.url}/v1/responses`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ model: "say", input: "hi" }) }).then((r) => r.text());
  const ws = await openWebSocket(proxy.port, "/v1/responses", auth);
  ws.send(JSON.stringify({ type: "response.create", model: "say", input: "hi" }));
  await ws.next(["response.completed", "error"], 10_000);
  ws.destroy();
  return { url: proxy.url, port: proxy.port, auth };
}

/** @type {Array<{ door: string, before: number, peak: number, worst: number, note: string }>} */
const rows = [];
/**
 * Runs one door on a Switchyard of its own (so no door's heap is another's) while sampling RSS;
 * `door` returns a note, and a cleanup run before the peak is final.
 * @param {string} name
 * @param {(s: { url: string, port: number, auth: Record<string, string> }) => Promise<{ note: string, cleanup?: () => void | Promise<void> }>} door
 */
async function measure(name, door) {
  const target = await freshSwitchyard();
  await sleep(1000);
  const before = rssMiB();
  let peak = before;
  const start = eachMiB();
  /** @type {Map<string, number>} */
  const peaks = new Map(start);
  const sample = () => {
    const now = eachMiB();
    peak = Math.max(peak, [...now.values()].reduce((a, b) => a + b, 0));
    for (const [pid, mib] of now) peaks.set(pid, Math.max(peaks.get(pid) ?? 0, mib));
  };
  const sampler = setInterval(sample, 50);
  let note;
  try {
    const result = await door(target);
    note = result.note;
    sample();
    await result.cleanup?.();
  } catch (e) {
    note = `failed: ${e instanceof Error ? e.message : String(e)}`;
  }
  await sleep(300);
  clearInterval(sampler);
  sample();
  const worst = Math.max(...[...peaks].map(([pid, mib]) => mib - (start.get(pid) ?? 0)));
  rows.push({ door: name, before, peak, worst, note });
  console.error(`${name}: ${before.toFixed(0)} → ${peak.toFixed(0)} MiB (${note})`);
  await proxy?.stop();
  proxy = undefined;
}

await measure("sockets", async ({ port, auth }) => {
  /** @type {Array<Awaited<ReturnType<typeof openWebSocket>>>} */
  const open = [];
  let refused = 0;
  let answered = 0;
  for (let i = 0; i < SOCKETS; i++) {
    const ws = await openWebSocket(port, "/v1/responses", auth);
    if (ws.status !== 101) {
      refused++;
      continue;
    }
    open.push(ws);
    ws.send(JSON.stringify({ type: "response.create", generate: false, model: "say", store: false, input: user("s".repeat(MIB)) }));
  }
  for (const ws of open) if ((await ws.next(["response.completed", "error"], 10_000))?.type === "response.completed") answered++;
  return { note: `${open.length} opened, ${refused} refused, ${answered} prewarms answered`, cleanup: () => open.forEach((ws) => void ws.destroy()) };
});

await measure("chain", async ({ port, auth }) => {
  const ws = await openWebSocket(port, "/v1/responses", auth);
  if (ws.status !== 101) return { note: `upgrade ${ws.status}` };
  let last;
  let accepted = 0;
  let tooLarge = 0;
  for (let i = 0; i < CHAIN && ws.closed === null; i++) {
    ws.send(JSON.stringify({ type: "response.create", generate: false, model: "say", store: false, ...(last ? { previous_response_id: last } : {}), input: user("c".repeat(3.5 * MIB)) }));
    const m = await ws.next(["response.completed", "error"], 20_000);
    if (m?.type === "response.completed") {
      accepted++;
      last = m.response.id;
    } else if (m?.error?.code === "request_too_large") tooLarge++;
  }
  return { note: `${accepted} chained, ${tooLarge} refused 413`, cleanup: () => void ws.destroy() };
});

// The same bytes as the chain door over HTTP, for comparison: each a request of its own, answered.
await measure("http-bodies", async ({ url, auth }) => {
  let ok = 0;
  for (let i = 0; i < CHAIN; i++) {
    const res = await fetch(`${url}/v1/responses`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ model: "say", store: false, input: user("c".repeat(3.5 * MIB)) }),
      signal: AbortSignal.timeout(30_000),
    });
    await res.arrayBuffer();
    if (res.ok) ok++;
  }
  return { note: `${CHAIN} POSTs of 3.5 MiB, ${ok} answered` };
});

await measure("ws-reader", async ({ port, auth }) => {
  const ws = await openWebSocket(port, "/v1/responses", auth);
  if (ws.status !== 101) return { note: `upgrade ${ws.status}` };
  ws.stopReading();
  ws.send(JSON.stringify({ type: "response.create", model: "flood", input: "flood me" }));
  await sleep(HOLD_MS);
  return { note: `never read for ${HOLD_MS / 1000} s`, cleanup: () => void ws.destroy() };
});

await measure("sse-reader", async ({ port, auth }) => {
  const end = postNeverRead(port, "/v1/responses", auth, JSON.stringify({ model: "flood", stream: true, input: "flood me" }));
  await sleep(HOLD_MS);
  return { note: `never read for ${HOLD_MS / 1000} s`, cleanup: () => void end() };
});

await measure("gzip-layers", async ({ url, auth }) => {
  let body = gzipSync(Buffer.alloc(GZIP_MIB * MIB));
  for (let i = 1; i < LAYERS; i++) body = gzipSync(body);
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", "content-encoding": Array(LAYERS).fill("gzip").join(", ") },
    body,
    signal: AbortSignal.timeout(60_000),
  });
  const code = res.ok ? "" : (/** @type {{ error?: { code?: string } } | null} */ (await res.json().catch(() => null))?.error?.code ?? "");
  return { note: `${LAYERS} layers of ${GZIP_MIB} MiB zeros in ${body.length} bytes: ${res.status} ${code}` };
});

clearTimeout(watchdog);
await fixtures.close();

console.log("| door | RSS before (MiB) | peak (MiB) | growth (MiB) | one process's largest growth (MiB) | what happened |");
console.log("|---|---|---|---|---|---|");
for (const r of rows) console.log(`| ${r.door} | ${r.before.toFixed(0)} | ${r.peak.toFixed(0)} | ${(r.peak - r.before).toFixed(0)} | ${r.worst.toFixed(0)} | ${r.note} |`);
