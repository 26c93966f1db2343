#!/usr/bin/env node
// Cache-aware routing across llama-servers: how well routing keeps agent conversations on the
// llama-server that holds their prompt cache, and what that does to latency. Everything is real: two
// llama-servers (the project's tiny random-weight test model, 2 slots each, llama-server's defaults
// otherwise: --cache-ram 8192 MiB, --slot-prompt-similarity 0.10) and Switchyard under `wrangler dev`
// (`npm start`, test/support/switchyard-dev.mjs) with three models: `pool` (both servers,
// balance "least-busy"), `pin-a` and `pin-b` (one server each).
//
// The workload: N agent conversations of T turns. Every conversation opens with the same ~2,000-token
// system prompt and tools-like preamble (a team's agents share one), then a first task of ~300 tokens
// of its own; each later turn appends the assistant's previous answer and a new user/tool-result
// message of ~600 tokens. Texts are seeded pseudo-random "wordN" words sized with llama-server's
// `POST /tokenize` (bench/cache-routing/workload.mjs): reproducible, and unique to each cell. Answers
// are forced by a one-literal grammar, so every turn costs the same few generated tokens.
//
// Turns go round by round (round r = turn r of every conversation, a barrier after each round), at
// most c requests in flight within a round; a round's conversations are sent in a seeded shuffled
// order (as agents' turns arrive in no fixed order; in conversation order, "alternation" below would
// send every conversation to the same server every time whenever N is even). Strategies:
//   switchyard   every request to `pool` (Switchyard chooses)
//   pinned       conversation i to `pin-a` when i is even, else `pin-b` (perfect affinity and balance)
//   alternation  the j-th request sent in the cell to `pin-a` when j is even, else `pin-b` (round-robin)
// Each cell (strategy × N × c) gets fresh llama-servers and a fresh Switchyard; cells run with the
// strategies alternating (for each N, for each c: switchyard, pinned, alternation), so the shared
// machine's noise falls on them alike. Per cell: reuse = Σ cached_tokens / Σ prompt_tokens over turns
// ≥ 2; moves = turns ≥ 2 served by another server than the conversation's previous turn; split =
// conversations per server by their first turn; p50/p99 per request, sending to the end of the stream.
// Any error (non-200, an error frame, a wrong answer, no usage or no target) fails the run.
//
//   npx node bench/cache-routing.mjs [--conversations 8,16] [--turns 6] [--concurrency 1,4,all]
//     [--strategies switchyard,pinned,alternation] [--seed cache-routing] [--json FILE] [--write]
// (or plain `node bench/cache-routing.mjs …` under Node 22). About 9–10 minutes for the default 18 cells
// on 2 shared cores. --write replaces the section between the cache-routing markers in
// docs/benchmarks.md (nothing else of the file); --json writes every request's record.
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { readChatStream } from "./chat-stream.mjs";
import { literalGrammar, startLlamaServer } from "../test/support/llama-server.mjs";
import { startSwitchyard } from "../test/support/switchyard-dev.mjs";
import { END, SECTION_HEADING, spliceSection, summarize, tables } from "./cache-routing/report.mjs";
import { answerAt, cellTexts, longestPrompt, messagesAt, rng, shuffle, SIZES } from "./cache-routing/workload.mjs";

/**
 * @typedef {import("./cache-routing/report.mjs").RequestRecord} RequestRecord
 * @typedef {import("./cache-routing/report.mjs").CellSummary} CellSummary
 * @typedef {import("./cache-routing/workload.mjs").CellTexts} CellTexts
 * @typedef {import("./cache-routing/workload.mjs").Message} Message
 * @typedef {"switchyard" | "pinned" | "alternation"} Strategy
 * @typedef {{ name: string, strategy: Strategy, conversations: number, concurrency: number | "all" }} Cell
 * @typedef {{ url: string, stop(): Promise<void> }} Stoppable
 */

const { values: flags } = parseArgs({
  strict: true,
  allowPositionals: false,
  options: {
    conversations: { type: "string", default: "8,16" },
    turns: { type: "string", default: "6" },
    concurrency: { type: "string", default: "1,4,all" },
    strategies: { type: "string", default: "switchyard,pinned,alternation" },
    seed: { type: "string", default: "cache-routing" },
    json: { type: "string" },
    write: { type: "boolean", default: false },
  },
});

/**
 * A comma-separated list of positive integers.
 * @param {string} name
 * @param {string} value
 */
function positiveInts(name, value) {
  return value.split(",").map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: ${JSON.stringify(s)} is not a positive integer`);
    return n;
  });
}

const CONVERSATIONS = positiveInts("conversations", flags.conversations);
const [TURNS] = positiveInts("turns", flags.turns);
if (TURNS < 2) throw new Error("--turns must be at least 2 (reuse and moves are measured from turn 2)");
/** @type {Array<number | "all">} */
const CONCURRENCY = flags.concurrency.split(",").map((s) => (s.trim() === "all" ? "all" : positiveInts("concurrency", s)[0]));
const KNOWN = /** @type {Strategy[]} */ (["switchyard", "pinned", "alternation"]);
const STRATEGIES = flags.strategies.split(",").map((s) => {
  const name = /** @type {Strategy} */ (s.trim());
  if (!KNOWN.includes(name)) throw new Error(`--strategies: ${JSON.stringify(s)} is not one of ${KNOWN.join(", ")}`);
  return name;
});
const SEED = flags.seed;
const PARALLEL = 2;
/** The generation budget: a bit above the longest literal (the tiny model spends about one token per character under a grammar). */
const MAX_TOKENS = Math.max(...Array.from({ length: TURNS }, (_, t) => answerAt(t + 1).length)) + 8;
const REQUEST_TIMEOUT_MS = 300_000;
const clock = () => performance.now();

/** @type {Cell[]} */
const CELLS = [];
for (const conversations of CONVERSATIONS) {
  for (const concurrency of CONCURRENCY) {
    for (const strategy of STRATEGIES) {
      CELLS.push({ name: `${strategy} N=${conversations} c=${concurrency}`, strategy, conversations, concurrency });
    }
  }
}

// Whatever is running when the run is interrupted is stopped (Switchyard runs in a process group of
// its own, which a Ctrl-C of this process would not reach).
/** @type {Set<Stoppable>} */
const live = new Set();
for (const signal of /** @type {NodeJS.Signals[]} */ (["SIGINT", "SIGTERM"])) {
  process.once(signal, async () => {
    console.error(`\n${signal}: stopping ${live.size} server(s)`);
    await Promise.allSettled([...live].map((s) => s.stop()));
    process.exit(130);
  });
}

/**
 * Starts something stoppable and keeps it in `live` until stopped.
 * @template {Stoppable} T
 * @param {Promise<T>} started
 * @returns {Promise<T>}
 */
async function track(started) {
  const s = await started;
  live.add(s);
  const stop = s.stop.bind(s);
  s.stop = async () => {
    live.delete(s);
    await stop();
  };
  return s;
}

/**
 * One streamed chat request through Switchyard, read to its end. Throws on anything but a clean
 * answer: a non-200, an error frame, no [DONE], no finish chunk, a finish other than `stop`, content
 * other than the literal, no usage or cached_tokens, no x_switchyard.target.
 * @param {{ url: string, model: string, messages: Message[], answer: string }} o
 */
async function chat({ url, model, messages, answer }) {
  const t0 = clock();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
      grammar: literalGrammar(answer),
      max_tokens: MAX_TOKENS,
    }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (res.status !== 200 || !res.body) throw new Error(`${model}: HTTP ${res.status}: ${(await res.text()).slice(0, 500)}`);
  const { content, done, finish, ext, usage, problems } = await readChatStream(res.body);
  const ms = clock() - t0;
  if (!done) problems.push("no [DONE]");
  if (finish !== "stop") problems.push(`finish_reason ${finish}`);
  if (content !== answer) problems.push(`answer ${JSON.stringify(content)}, expected ${JSON.stringify(answer)}`);
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  if (typeof usage?.prompt_tokens !== "number" || typeof cached !== "number") problems.push(`usage ${JSON.stringify(usage)}`);
  if (typeof ext?.target !== "string") problems.push(`x_switchyard ${JSON.stringify(ext)}`);
  if (problems.length) throw new Error(`${model}: ${problems.join("; ")}`);
  return {
    ms,
    target: /** @type {string} */ (ext?.target),
    attempts: typeof ext?.attempts === "number" ? ext.attempts : null,
    promptTokens: /** @type {number} */ (usage?.prompt_tokens),
    cachedTokens: /** @type {number} */ (cached),
    completionTokens: typeof usage?.completion_tokens === "number" ? usage.completion_tokens : null,
  };
}

/**
 * Runs `tasks` with at most `limit` running at once, started in the order given; the first failure
 * rejects once the running ones have settled (no new one starts after it).
 * @param {Array<() => Promise<void>>} tasks
 * @param {number} limit
 */
async function runLimited(tasks, limit) {
  let next = 0;
  /** @type {unknown} */
  let failure;
  let failed = false;
  const worker = async () => {
    while (!failed && next < tasks.length) {
      const task = tasks[next++];
      try {
        await task();
      } catch (e) {
        if (!failed) failure = e;
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  if (failed) throw failure;
}

/**
 * One cell: fresh llama-servers A and B and a fresh Switchyard, T rounds, then everything stopped.
 * @param {Cell} cell
 * @param {CellTexts} texts
 * @param {number} ctx
 * @param {RequestRecord[]} records where this cell's records go (kept when it fails)
 * @returns {Promise<CellSummary>}
 */
async function runCell(cell, texts, ctx, records) {
  const t0 = clock();
  /** @type {Stoppable[]} */
  const started = [];
  try {
    const [a, b] = await Promise.all([0, 1].map(() => track(startLlamaServer({ ctx, parallel: PARALLEL })).then((s) => (started.push(s), s))));
    const sy = await track(
      startSwitchyard({
        vars: {
          SWITCHYARD_CONFIG: {
            models: {
              pool: { targets: [{ kind: "llama", url: a.url }, { kind: "llama", url: b.url }], balance: "least-busy" },
              "pin-a": { targets: [{ kind: "llama", url: a.url }] },
              "pin-b": { targets: [{ kind: "llama", url: b.url }] },
            },
          },
        },
      }),
    );
    started.push(sy);
    // The isolate's first request (config parsing, module start) without touching either server.
    const warm = await fetch(`${sy.url}/v1/models`);
    if (warm.status !== 200) throw new Error(`GET /v1/models: ${warm.status} ${await warm.text()}`);
    await warm.arrayBuffer();
    const startMs = clock() - t0;

    const portOf = (/** @type {string} */ url) => new URL(url).port;
    /** @type {Record<string, "A" | "B">} */
    const servers = { [portOf(a.url)]: "A", [portOf(b.url)]: "B" };
    const limit = cell.concurrency === "all" ? cell.conversations : cell.concurrency;
    let seq = 0;
    const runStart = clock();
    for (let turn = 1; turn <= TURNS; turn++) {
      const order = shuffle(
        Array.from({ length: cell.conversations }, (_, i) => i),
        rng(`${SEED}:${cell.name}:round ${turn}`),
      );
      await runLimited(
        order.map((i) => async () => {
          const j = seq++;
          const model = cell.strategy === "switchyard" ? "pool" : cell.strategy === "pinned" ? (i % 2 === 0 ? "pin-a" : "pin-b") : j % 2 === 0 ? "pin-a" : "pin-b";
          const sentAtMs = clock() - runStart;
          const r = await chat({ url: sy.url, model, messages: messagesAt(texts, i, turn), answer: answerAt(turn) });
          const server = servers[/:(\d+)$/.exec(r.target)?.[1] ?? ""];
          if (!server) throw new Error(`${model}: served by ${r.target}, neither A (${a.url}) nor B (${b.url})`);
          if ((model === "pin-a" && server !== "A") || (model === "pin-b" && server !== "B")) throw new Error(`${model} served by ${server}`);
          records.push({
            cell: cell.name,
            strategy: cell.strategy,
            conversations: cell.conversations,
            concurrency: cell.concurrency,
            conversation: i,
            turn,
            seq: j,
            model,
            server,
            ...r,
            sentAtMs,
          });
        }),
        limit,
      );
    }
    const runMs = clock() - runStart;
    return summarize(
      records.filter((r) => r.cell === cell.name),
      { cell: cell.name, strategy: cell.strategy, conversations: cell.conversations, concurrency: cell.concurrency, runMs, startMs },
    );
  } finally {
    await Promise.allSettled(started.reverse().map((s) => s.stop()));
  }
}

const load = () => loadavg().map((x) => x.toFixed(2)).join(" ");
const commandLine = [
  "npx node bench/cache-routing.mjs",
  `--conversations ${CONVERSATIONS.join(",")}`,
  `--turns ${TURNS}`,
  `--concurrency ${CONCURRENCY.join(",")}`,
  `--strategies ${STRATEGIES.join(",")}`,
  ...(SEED === "cache-routing" ? [] : [`--seed ${SEED}`]),
  ...(flags.write ? ["--write"] : []),
].join(" ");

const runT0 = clock();
const startedAt = new Date();
const loadStart = load();
console.log(`${commandLine}\n${startedAt.toISOString()}, load average ${loadStart}, ${CELLS.length} cells`);

// The texts of every cell, sized with one llama-server's tokenizer before any cell runs.
/** @type {Map<string, CellTexts>} */
const textsOf = new Map();
{
  const t = clock();
  const tokenizer = await track(startLlamaServer({ ctx: 512, parallel: 1 }));
  try {
    for (const cell of CELLS) {
      textsOf.set(cell.name, await cellTexts({ url: tokenizer.url, seed: SEED, cell: cell.name, conversations: cell.conversations, turns: TURNS }));
    }
  } finally {
    await tokenizer.stop();
  }
  console.log(`texts of ${CELLS.length} cells sized in ${((clock() - t) / 1000).toFixed(1)} s`);
}
const longest = Math.max(...[...textsOf.values()].map((t) => longestPrompt(t, TURNS)));
// One slot must hold the longest prompt and its answer; ctx is split between the slots.
const perSlot = Math.ceil((longest + MAX_TOKENS + 64) / 512) * 512;
const CTX = PARALLEL * perSlot;
const preambleTokens = [...textsOf.values()].map((t) => t.tokens.preamble);
console.log(`longest prompt ≤ ${longest} tokens (estimate); ctx ${CTX} = ${PARALLEL} slots × ${perSlot}; max_tokens ${MAX_TOKENS}`);

/** @type {RequestRecord[]} */
const records = [];
/** @type {CellSummary[]} */
const summaries = [];
/** @param {string | undefined} file */
function writeJson(file, /** @type {unknown} */ error) {
  if (!file) return;
  const meta = { command: commandLine, startedAt: startedAt.toISOString(), ctx: CTX, parallel: PARALLEL, maxTokens: MAX_TOKENS, sizes: SIZES, seed: SEED };
  writeFileSync(file, JSON.stringify({ meta, error: error ? String(error) : undefined, cells: summaries, records }, null, 1));
}

try {
  for (const [k, cell] of CELLS.entries()) {
    const s = await runCell(cell, /** @type {CellTexts} */ (textsOf.get(cell.name)), CTX, records);
    summaries.push(s);
    console.log(
      `[${k + 1}/${CELLS.length}] ${cell.name.padEnd(26)} reuse ${(100 * s.reuse).toFixed(1).padStart(5)} % (ceiling ${(100 * s.ceiling).toFixed(1)} %)  moves ${String(s.moves).padStart(2)}/${s.laterTurns}  split ${s.split.padEnd(5)}  p50 ${Math.round(s.p50)} ms  p99 ${Math.round(s.p99)} ms  (start ${(s.startMs / 1000).toFixed(1)} s, run ${(s.runMs / 1000).toFixed(1)} s)`,
    );
  }
} catch (e) {
  writeJson(flags.json, e);
  console.error(`\nFAILED in cell ${summaries.length + 1} of ${CELLS.length} (${CELLS[summaries.length]?.name}):`);
  console.error(e);
  process.exit(1);
}

const totalS = (clock() - runT0) / 1000;
const loadEnd = load();
const out = tables(summaries, TURNS);
const ceilings = summaries.map((s) => s.ceiling);
const ceilingRange = `${(100 * Math.min(...ceilings)).toFixed(1)}–${(100 * Math.max(...ceilings)).toFixed(1)} %`;
console.log(`\n${out}\n\nreuse ceiling (every turn reusing its whole previous prompt): ${ceilingRange}`);
console.log(`total ${(totalS / 60).toFixed(1)} min; load average ${loadStart} → ${loadEnd}`);
writeJson(flags.json, undefined);

if (flags.write) {
  const file = "docs/benchmarks.md";
  const perCell = summaries.map((s) => (s.startMs + s.runMs) / 1000);
  const body = [
    `\`${commandLine}\` (${startedAt.toISOString().slice(0, 16).replace("T", " ")} UTC; 2 shared cores, Node ${process.versions.node}; ` +
      `load average ${loadStart} at the start, ${loadEnd} at the end; ${(totalS / 60).toFixed(1)} min for ${summaries.length} cells, ` +
      `${Math.min(...perCell).toFixed(0)}–${Math.max(...perCell).toFixed(0)} s each with the servers' start):`,
    `Two llama-servers A and B (the tiny random-weight test model, ${PARALLEL} slots each, \`-c ${CTX}\` = ${perSlot} tokens per slot, ` +
      `1 thread each, llama-server's defaults otherwise: \`--cache-ram\` 8192 MiB, \`--slot-prompt-similarity\` 0.10) behind one Switchyard ` +
      `under \`wrangler dev\`; a fresh pair and a fresh Switchyard for every row. Each conversation: a shared system prompt and tools-like ` +
      `preamble of ${Math.min(...preambleTokens)}–${Math.max(...preambleTokens)} tokens, a first task of its own (~${SIZES.task} tokens), then per turn ` +
      `the previous answer (a grammar-forced literal) and a new message of ~${SIZES.followUp} tokens, up to ~${longest} tokens at turn ${TURNS}. ` +
      `Rounds: turn r of every conversation (in a seeded shuffled order), a barrier after each.`,
    tables(summaries, TURNS),
    [
      "- **in flight**: at most this many requests of a round at once (`all`: the whole round).",
      "- **strategy**: `switchyard`: every request to the `pool` model (both servers, `balance: \"least-busy\"`), Switchyard chooses; " +
        "`pinned`: conversation i always to A when i is even, else B (perfect affinity, perfect balance); " +
        "`alternation`: the j-th request sent to A when j is even, else B (naive round-robin).",
      `- **reuse**: Σ \`cached_tokens\` / Σ \`prompt_tokens\` over turns 2–${TURNS} (the prompt tokens llama-server did not recompute: its \`timings.cache_n\`); if every such turn reused its conversation's whole previous prompt it would be ${ceilingRange} in these rows. **reuse ÷ pinned**: against the pinned row of the same table and in-flight count.`,
      `- **moves**: turns 2–${TURNS} served by another server than the conversation's previous turn, of all such turns.`,
      "- **split**: conversations per server (A/B) by the server of their first turn.",
      "- **p50 / p99 ms**: per request, from sending it to the end of its stream, over all turns.",
    ].join("\n"),
  ].join("\n\n");
  const text = readFileSync(file, "utf8");
  writeFileSync(file, spliceSection(text, body));
  console.log(`wrote the "${SECTION_HEADING.slice(3)}" section of ${file} (up to ${END})`);
}
