#!/usr/bin/env node
// Codex CLI's two provider paths through Switchyard, side by side in one run (issue 30): the README's
// custom provider (HTTP POST /v1/responses), the built-in `openai` provider at `openai_base_url`
// (every turn over the Responses WebSocket, GET /v1/responses), and a custom provider with
// `supports_websockets = true`. Each round runs the three in a rotated order on the same tool loop
// (the agent writes agent-proof.txt with its shell tool, reads the result, answers) against the
// scripted upstream of the e2e tests (test/support/agent-upstream.mjs, native tool calls), through
// `wrangler dev` as users start it. A run counts only when the tool loop completed and, on the socket
// paths, every turn went over an accepted socket with no reconnect or HTTP fallback.
// It prints each path's median and its ratio to the custom provider's; docs/benchmarks.md ("Codex on
// both provider paths") quotes the table by hand.
//   PATH=$PWD/node_modules/.bin:$PATH flock /tmp/sy-servers.lock node bench/codex-paths.mjs [--rounds 5]
import { parseArgs } from "node:util";
import { startAgentUpstream } from "../test/support/agent-upstream.mjs";
import { startTap } from "../test/support/http-tap.mjs";
import { exerciseAgent } from "../test/support/agent-report.mjs";
import { runCodex } from "../test/support/coding-agents.mjs";
import { startSwitchyard } from "../test/support/switchyard-dev.mjs";

const { values: flags } = parseArgs({ options: { rounds: { type: "string", default: "5" } } });
const ROUNDS = Number(flags.rounds);

/** @type {Array<{ name: string, options: Record<string, unknown>, socket: boolean }>} */
const PATHS = [
  { name: "custom provider (HTTP)", options: {}, socket: false },
  { name: "built-in provider (openai_base_url, WebSocket)", options: { provider: "builtin" }, socket: true },
  { name: "custom provider, supports_websockets", options: { websockets: true }, socket: true },
];

/** @param {number[]} xs */
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : NaN;
};

const upstream = await startAgentUpstream({ mode: "native" });
const proxy = await startSwitchyard({ vars: { SWITCHYARD_CONFIG: { models: { "agent-native": { targets: [{ kind: "llama", url: upstream.url }] } } } } });
const tap = await startTap(proxy.url);
/** @type {Map<string, number[]>} */
const times = new Map(PATHS.map((p) => [p.name, []]));
/** @type {string[]} */
const failures = [];
try {
  // One unmeasured run per path: wrangler compiles the Worker on its first request, Codex warms its caches.
  for (const round of [-1, ...Array.from({ length: ROUNDS }, (_, i) => i)]) {
    const order = PATHS.map((_, i) => PATHS[(i + Math.max(0, round)) % PATHS.length]);
    for (const path of order) {
      let out;
      try {
        out = await exerciseAgent({ name: `codex bench ${path.name}`, client: runCodex, upstream, proxy, tap, model: "agent-native", options: path.options });
      } catch (e) {
        failures.push(`${path.name}, round ${round + 1}: ${String(e instanceof Error ? e.message : e).slice(0, 300)}`);
        continue;
      }
      const sockets = out.exchanges.filter((x) => x.method === "GET" && x.path === "/v1/responses");
      const posts = out.exchanges.filter((x) => x.method === "POST" && x.path === "/v1/responses");
      const fellBack = /Reconnecting|Falling back from WebSockets/.test(out.run.stderr + out.run.stdout);
      if (path.socket && (!sockets.length || sockets.some((x) => x.status !== 101) || posts.length || fellBack)) {
        failures.push(`${path.name}, round ${round + 1}: not over the socket alone (sockets ${JSON.stringify(sockets.map((x) => x.status))}, ${posts.length} POSTs, fallback ${fellBack})`);
        continue;
      }
      if (round >= 0) times.get(path.name)?.push(out.run.ms);
      process.stderr.write(`${round < 0 ? "warm-up" : `round ${round + 1}`}: ${path.name} ${out.run.ms} ms\n`);
    }
  }
} finally {
  await tap.close();
  await proxy.stop();
  await upstream.close();
}

const base = median(times.get(PATHS[0].name) ?? []);
console.log(`Codex CLI, one tool loop, ${ROUNDS} rounds (median of each path's completed runs):\n`);
console.log("| path | runs | median | ratio to the custom provider |");
console.log("|---|---|---|---|");
for (const p of PATHS) {
  const xs = times.get(p.name) ?? [];
  const m = median(xs);
  console.log(`| ${p.name} | ${xs.length} | ${(m / 1000).toFixed(2)} s | ×${(m / base).toFixed(2)} |`);
}
if (failures.length) console.log(`\nFailed runs:\n${failures.map((f) => `- ${f}`).join("\n")}`);
process.exit(failures.length ? 1 : 0);
