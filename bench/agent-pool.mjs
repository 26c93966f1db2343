#!/usr/bin/env node
// Issue 47: a team of agents on a pool of three llama-servers, where prefill costs what it costs.
// The model is a random-weight GGUF written by the project's own writer, bigger than the test model
// (scripts/make-bench-model.mjs: prefill ~2,000 tokens/s on one core here, so a full prompt near the
// window takes seconds and a move that recomputes it costs that much). Three llama-servers
// (`-t 1 --poll 0`, `-np 4`), fresh for each strategy; 20 simulated agent sessions from a seed
// (bench/agent-pool/workload.mjs): shared and own system prompts, tool loops, growing contexts, think
// time, bursty arrivals. Strategies, one after the other in the same run:
//   switchyard     every turn to Switchyard (`wrangler dev`, a `pool` model of the three, "least-busy")
//   pinned         session i straight to server i mod 3 (perfect affinity)
//   round-robin    the j-th turn sent straight to server j mod 3
//   least-loaded   straight to the server with the fewest of the bench's turns in flight (ties in turn)
// Per strategy: p50/p99 time to first token, tokens/s and turns/s over the strategy's span, prompt-cache
// reuse (Σ cached_tokens / Σ prompt_tokens), goodput (turns answered in full; refused or timed out),
// moves (turns served by another server than the session's previous turn).
//
//   flock /tmp/sy-servers.lock timeout 900 node bench/agent-pool.mjs [--quick] [--seed agent-pool] [--rev HEAD]
//     [--strategies switchyard,pinned,round-robin,least-loaded] [--json FILE] [--write]
// About 8 minutes (--quick: 10 sessions, shorter contexts, about 3 minutes). --write replaces the block
// between the agent-pool markers of docs/benchmarks.md; --json writes every turn's record (the trace
// test/unit/routing/placement/ fixtures are cut from). Switchyard runs from a snapshot of --rev
// (committed code only: uncommitted edits are not in it).
import { execSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { startLlamaServer } from "../test/support/llama-server.mjs";
import { startSwitchyard } from "../test/support/switchyard-dev.mjs";
import { BENCH_SHAPE, makeBenchModel } from "../scripts/make-bench-model.mjs";
import { replaceMarkedBlock } from "./doc-block.mjs";
import { streamTurn } from "./agent-pool/client.mjs";
import { descendantsCpu } from "./agent-pool/cpu.mjs";
import { END, HEADING, START, summarize, table, verdict } from "./agent-pool/report.mjs";
import { ANSWERS, makeSessions, messagesAt } from "./agent-pool/workload.mjs";

/**
 * @typedef {import("./agent-pool/report.mjs").TurnRecord} TurnRecord
 * @typedef {import("./agent-pool/workload.mjs").Session} Session
 * @typedef {"switchyard" | "pinned" | "round-robin" | "least-loaded"} Strategy
 */

const { values: flags } = parseArgs({
  strict: true,
  options: {
    quick: { type: "boolean", default: false },
    seed: { type: "string", default: "agent-pool" },
    strategies: { type: "string", default: "switchyard,pinned,round-robin,least-loaded" },
    rev: { type: "string", default: "HEAD" },
    json: { type: "string" },
    write: { type: "boolean", default: false },
  },
});
const KNOWN = /** @type {Strategy[]} */ (["switchyard", "pinned", "round-robin", "least-loaded"]);
const STRATEGIES = flags.strategies.split(",").map((s) => {
  if (!KNOWN.includes(/** @type {Strategy} */ (s.trim()))) throw new Error(`--strategies: ${s} is not one of ${KNOWN.join(", ")}`);
  return /** @type {Strategy} */ (s.trim());
});
const SERVERS = 3;
const SLOTS = 4;
const SHAPE = flags.quick
  ? { sessions: 10, windowTokens: 4096, maxTurns: 8, bursts: 2, burstGapMs: 10_000 }
  : { sessions: 20, windowTokens: 6144, maxTurns: 12, bursts: 4, burstGapMs: 12_000 };
const MAX_TOKENS = 24;
const repo = resolve(import.meta.dirname, "..");

/**
 * Switchyard runs from a snapshot of `rev` (git archive, built), so edits to the tree during a run
 * (wrangler dev reloads on them, cutting every stream) change nothing.
 * @param {string} rev
 */
function snapshot(rev) {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-agent-pool-"));
  execSync(`git archive ${rev} | tar -x -C ${JSON.stringify(dir)}`, { cwd: repo });
  symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
  execSync("node worker/build.mjs", { cwd: dir, stdio: "ignore" });
  return dir;
}
const TURN_TIMEOUT_MS = 180_000;
const clock = () => performance.now();
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** @type {Set<{ stop(): Promise<void> }>} */
const live = new Set();
for (const signal of /** @type {NodeJS.Signals[]} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, async () => {
    await Promise.allSettled([...live].map((s) => s.stop()));
    process.exit(130);
  });
}

/**
 * How each strategy picks a server for a turn (baselines), or null for Switchyard (it picks).
 * @param {Strategy} strategy
 */
function chooser(strategy) {
  let next = 0;
  const inflight = Array.from({ length: SERVERS }, () => 0);
  return {
    inflight,
    /** @param {Session} s @returns {number | null} */
    pick(s) {
      if (strategy === "switchyard") return null;
      if (strategy === "pinned") return s.id % SERVERS;
      if (strategy === "round-robin") return next++ % SERVERS;
      // least-loaded: fewest in flight; ties go round the servers from the one after the last pick.
      let best = -1;
      for (let k = 0; k < SERVERS; k++) {
        const i = (next + k) % SERVERS;
        if (best < 0 || inflight[i] < inflight[best]) best = i;
      }
      next = best + 1;
      return best;
    },
  };
}

/**
 * One strategy on fresh servers: every session runs its turns with its think times; returns the records.
 * @param {Strategy} strategy
 * @param {Session[]} sessions
 * @param {string} model
 * @returns {Promise<{ records: TurnRecord[], cpu: { servers: number, proxy: number, bench: number } }>}
 */
async function runStrategy(strategy, sessions, model) {
  /** @type {Array<{ url: string, stop(): Promise<void> }>} */
  const started = [];
  const track = (/** @type {{ url: string, stop(): Promise<void> }} */ s) => (started.push(s), live.add(s), s);
  try {
    const servers = await Promise.all(
      Array.from({ length: SERVERS }, () =>
        startLlamaServer({ model, ctx: SLOTS * SHAPE.windowTokens, parallel: SLOTS, threads: 1, args: ["--poll", "0"] }).then(track),
      ),
    );
    let url = "";
    if (strategy === "switchyard") {
      process.chdir(switchyardDir);
      const sy = track(
        await startSwitchyard({
          vars: { SWITCHYARD_CONFIG: { models: { pool: { targets: servers.map((s) => ({ kind: "llama", url: s.url })), balance: "least-busy" } } } },
        }).finally(() => process.chdir(repo)),
      );
      const warm = await fetch(`${sy.url}/v1/models`);
      if (warm.status !== 200) throw new Error(`GET /v1/models: ${warm.status}`);
      await warm.arrayBuffer();
      url = sy.url;
    }
    const portOf = (/** @type {string} */ u) => /:(\d+)(\/|$)/.exec(u)?.[1];
    const byPort = new Map(servers.map((s, i) => [portOf(s.url), i]));
    const choose = chooser(strategy);
    /** @type {TurnRecord[]} */
    const records = [];
    const serverPids = new Set(servers.map((s) => /** @type {{ pid?: number }} */ (s).pid));
    const cpuBefore = descendantsCpu();
    const benchBefore = process.cpuUsage();
    const t0 = clock();
    await Promise.all(
      sessions.map(async (s) => {
        await sleep(s.startMs);
        for (let t = 0; t < s.turns.length; t++) {
          await sleep(s.turns[t].thinkMs);
          const pick = choose.pick(s);
          const sentAtMs = clock() - t0;
          if (pick !== null) choose.inflight[pick]++;
          const r = await streamTurn({
            url: pick === null ? url : servers[pick].url,
            model: "pool",
            messages: messagesAt(s, t),
            answer: ANSWERS[s.turns[t].kind],
            maxTokens: MAX_TOKENS,
            timeoutMs: TURN_TIMEOUT_MS,
          });
          if (pick !== null) choose.inflight[pick]--;
          const server = pick ?? (r.target ? byPort.get(portOf(r.target)) ?? null : null);
          const { target: _target, ...rest } = r;
          records.push({ strategy, session: s.id, turn: t, kind: s.turns[t].kind, server, sentAtMs, ...rest });
          if (!r.ok) console.error(`  ${strategy} session ${s.id} turn ${t}: ${r.error}`);
        }
      }),
    );
    // CPU over the strategy's span: the servers', the rest of the bench's children (Switchyard's
    // wrangler and workerd), the bench's own process.
    const cpuAfter = descendantsCpu();
    const cpu = { servers: 0, proxy: 0, bench: 0 };
    for (const [pid, seconds] of cpuAfter) cpu[serverPids.has(pid) ? "servers" : "proxy"] += seconds - (cpuBefore.get(pid) ?? 0);
    const used = process.cpuUsage(benchBefore);
    cpu.bench = (used.user + used.system) / 1e6;
    return { records, cpu };
  } finally {
    await Promise.allSettled(started.reverse().map((s) => (live.delete(s), s.stop())));
  }
}

const sessions = makeSessions(flags.seed, SHAPE);
const head = execSync(`git rev-parse --short ${flags.rev}`, { cwd: repo, encoding: "utf8" }).trim();
const switchyardDir = STRATEGIES.includes("switchyard") ? snapshot(flags.rev) : repo;
process.once("exit", () => switchyardDir !== repo && rmSync(switchyardDir, { recursive: true, force: true }));
const model = makeBenchModel(BENCH_SHAPE, { log: (m) => console.log(m) });
const turns = sessions.reduce((a, s) => a + s.turns.length, 0);
const largest = Math.max(...sessions.map((s) => s.systemTokens + s.turns.reduce((a, t) => a + t.tokens + 28, 0)));
const command = ["node bench/agent-pool.mjs", ...(flags.quick ? ["--quick"] : []), ...(flags.seed === "agent-pool" ? [] : [`--seed ${flags.seed}`]),
  ...(flags.strategies === "switchyard,pinned,round-robin,least-loaded" ? [] : [`--strategies ${flags.strategies}`])].join(" ");
const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");
const startedAt = new Date();
const loadStart = load();
console.log(`${command}\n${startedAt.toISOString()}, Switchyard at ${head}, load ${loadStart}; ${sessions.length} sessions, ${turns} turns, largest prompt ≈ ${largest} tokens`);

/** @type {TurnRecord[]} */
const all = [];
const summaries = [];
const runT0 = clock();
for (const strategy of STRATEGIES) {
  const t = clock();
  const { records, cpu } = await runStrategy(strategy, sessions, model);
  all.push(...records);
  const s = { ...summarize(strategy, records, SERVERS), cpu };
  summaries.push(s);
  console.log(
    `${strategy.padEnd(13)} p50 ${(s.p50 / 1000).toFixed(2)} s  p99 ${(s.p99 / 1000).toFixed(2)} s  ${Math.round(s.tokensPerS)} tok/s  ${s.turnsPerS.toFixed(3)} turns/s  reuse ${(100 * s.reuse).toFixed(1)} %  ok ${s.ok}/${s.requests}  moves ${s.moves}/${s.laterTurns}  split ${s.split}  cpu s: servers ${cpu.servers.toFixed(0)}, proxy ${cpu.proxy.toFixed(0)}, bench ${cpu.bench.toFixed(0)}  (${((clock() - t) / 1000).toFixed(0)} s)`,
  );
}
const totalMin = (clock() - runT0) / 60_000;
const loadEnd = load();
console.log(`\n${table(summaries)}\n\n${verdict(summaries).join("\n")}\n\ntotal ${totalMin.toFixed(1)} min, load ${loadStart} → ${loadEnd}`);
if (flags.json) writeFileSync(flags.json, JSON.stringify({ command, startedAt: startedAt.toISOString(), shape: SHAPE, model: BENCH_SHAPE, summaries, records: all }, null, 1));

if (flags.write) {
  const file = "docs/benchmarks.md";
  const body = [
    `\`flock /tmp/sy-servers.lock ${command} --write\` (${startedAt.toISOString().slice(0, 16).replace("T", " ")} UTC, Switchyard at ${head}; 2 shared cores, Node ${process.versions.node}; ` +
      `load average ${loadStart} at the start, ${loadEnd} at the end; ${totalMin.toFixed(1)} min):`,
    `Three llama-servers (\`-t 1 --poll 0 -np ${SLOTS} -c ${SLOTS * SHAPE.windowTokens}\`, ${SHAPE.windowTokens} tokens per slot), fresh for each row, serving ` +
      `a random-weight model of the project's writer (\`scripts/make-bench-model.mjs\`: ${BENCH_SHAPE.n_layer} layers, width ${BENCH_SHAPE.n_embd}, ` +
      `ffn ${BENCH_SHAPE.n_ff}; prefill ≈ 2,100 tokens/s and decode ≈ 50 tokens/s on one idle core). ${sessions.length} agent sessions ` +
      `(seed \`${flags.seed}\`, ${turns} turns, prompts up to ≈ ${largest} tokens): of every ten, four share one team prompt, three another, three have ` +
      `their own (1,200–1,800 tokens); a task, then tool-loop steps (300–1,500 tokens of tool output, 0.2–1.5 s apart) and user turns ` +
      `(40–200 tokens after 2–8 s) until the window; sessions arrive in ${SHAPE.bursts} bursts ${SHAPE.burstGapMs / 1000} s apart.`,
    table(summaries),
    verdict(summaries).map((l) => `- ${l}`).join("\n"),
  ].join("\n\n");
  const block = `${START}\n\n${body}\n\n${END}`;
  writeFileSync(file, replaceMarkedBlock(readFileSync(file, "utf8"), START, END, block, HEADING));
  console.log(`wrote the agent-pool block of ${file}`);
}
