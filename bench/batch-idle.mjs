#!/usr/bin/env node
// Batch work on idle capacity, on one llama-server (the tiny test model, `--parallel 2`) behind
// `wrangler dev`:
//   1. interactive time to first token, p50 and p99, with a large batch running against without it:
//      one interactive client sends streamed requests one after another, in rounds that alternate
//      "no batch" and "batch running" (the batch is created before a "with" round and cancelled after
//      it), so both sides see the same machine;
//   2. the batch's throughput when the pool is idle (lines per second from create to completed)
//      against the same requests sent straight to the llama-server by this process, as many at once
//      as the server has slots.
//   flock /tmp/sy-servers.lock npx node bench/batch-idle.mjs [--rounds 4] [--requests 30] [--lines 60] [--write docs/benchmarks.md]
// --write replaces the block between the batch-idle markers in that file.
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import OpenAI, { toFile } from "openai";
import { startLlamaServer } from "../test/support/llama-server.mjs";
import { grammar, startSwitchyard } from "../test/support/switchyard-dev.mjs";
import { replaceMarkedBlock } from "./doc-block.mjs";

const { values: flags } = parseArgs({ options: { rounds: { type: "string", default: "4" }, requests: { type: "string", default: "30" }, lines: { type: "string", default: "60" }, write: { type: "string" } } });
const ROUNDS = Number(flags.rounds);
const REQUESTS = Number(flags.requests);
const LINES = Number(flags.lines);
const SLOTS = 2;
const HEADING = "## Batch work on idle capacity";
const START = "<!-- batch-idle:start (written by bench/batch-idle.mjs --write) -->";
const END = "<!-- batch-idle:end -->";

/** @param {number[]} xs @param {number} q */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : NaN;
};
const f1 = (/** @type {number} */ x) => (Number.isFinite(x) ? x.toFixed(1) : "–");
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));
const benchStart = performance.now();
/** Progress on stderr (the table goes to stdout): a run that stalls says where. */
const progress = (/** @type {string} */ what) => console.error(`[batch-idle ${((performance.now() - benchStart) / 1000).toFixed(0)} s] ${what}`);

/**
 * A batch line's body: 15 tokens or so of literal text. Short, because the tiny model's 151k-token
 * vocabulary makes each grammar-constrained token cost tens of milliseconds on one thread: 48-token
 * lines ran at 0.7 lines/s straight to the server, and the run outlasted its 900 s bound.
 */
const lineBody = (/** @type {number} */ i) => ({ model: "one", temperature: 0, max_tokens: 32, messages: [{ role: "user", content: `batch ${i}` }], grammar: grammar(`batch line ${i}: the switchyard sorts the cars onto their tracks`) });

const llama = await startLlamaServer({ parallel: SLOTS, args: ["-t", "1"] });
const proxy = await startSwitchyard({
  vars: { SWITCHYARD_CONFIG: { models: { one: { targets: [{ kind: "llama", url: llama.url }] } }, health: { sampleMs: 200, snapshotTtlMs: 200 }, batch: { concurrency: 4 }, queue: { shared: true } } },
});
// A credential of its own each run: in open mode the batches' owner is the credential, and wrangler
// dev keeps Durable Object state between runs, so a run never inherits an earlier run's batches.
const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: `bench-${Date.now()}-${Math.random().toString(36).slice(2)}`, maxRetries: 0 });

/** One streamed interactive request: ms to its first content delta. */
async function ttft(/** @type {number} */ i) {
  const t0 = performance.now();
  const stream = /** @type {AsyncIterable<any>} */ (/** @type {unknown} */ (await client.chat.completions.create(/** @type {any} */ ({ model: "one", stream: true, temperature: 0, max_tokens: 16, messages: [{ role: "user", content: `hi ${i}` }], grammar: grammar(`interactive ${i}`) }))));
  let first = NaN;
  for await (const chunk of stream) if (Number.isNaN(first) && chunk.choices[0]?.delta?.content) first = performance.now() - t0;
  return first;
}

async function interactiveRound() {
  const out = [];
  for (let i = 0; i < REQUESTS; i++) {
    out.push(await ttft(i));
    await sleep(50);
  }
  return out;
}

async function createBatch(/** @type {number} */ n) {
  const jsonl = Array.from({ length: n }, (_, i) => JSON.stringify({ custom_id: `l${i}`, method: "POST", url: "/v1/chat/completions", body: lineBody(i) })).join("\n");
  const file = await client.files.create({ file: await toFile(Buffer.from(jsonl), "bench.jsonl"), purpose: "batch" });
  return client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
}

async function until(/** @type {string} */ id, /** @type {(b: any) => boolean} */ done) {
  for (;;) {
    const b = await client.batches.retrieve(id);
    if (done(b)) return b;
    await sleep(100);
  }
}

try {
  // Warm-up: the slot count is known, the code paths are compiled.
  for (let i = 0; i < 5; i++) await ttft(i);
  /** @type {number[]} */ const without = [];
  /** @type {number[]} */ const withBatch = [];
  let linesDuring = 0;
  for (let r = 0; r < ROUNDS; r++) {
    await sleep(500);
    without.push(...(await interactiveRound()));
    const b = await createBatch(2000);
    await until(b.id, (x) => (x.request_counts?.completed ?? 0) >= 4);
    const before = (await client.batches.retrieve(b.id)).request_counts?.completed ?? 0;
    withBatch.push(...(await interactiveRound()));
    linesDuring += ((await client.batches.retrieve(b.id)).request_counts?.completed ?? 0) - before;
    await client.batches.cancel(b.id);
    await until(b.id, (x) => x.status === "cancelled");
    progress(`round ${r + 1}/${ROUNDS}: ${without.length} without, ${withBatch.length} with, ${linesDuring} lines ran during`);
  }

  // Throughput on an idle pool: past the interactive window (10 s), the batch may take every slot.
  await sleep(11_000);
  const direct = async () => {
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: SLOTS }, async () => {
        while (next < LINES) {
          const i = next++;
          const res = await fetch(`${llama.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(lineBody(i)) });
          if (!res.ok) throw new Error(`direct ${res.status}`);
          await res.json();
        }
      }),
    );
    return LINES / ((performance.now() - t0) / 1000);
  };
  const batched = async () => {
    const b = await createBatch(LINES);
    const t0 = performance.now();
    const done = await until(b.id, (x) => x.status === "completed" || x.status === "failed");
    if (done.request_counts?.completed !== LINES) throw new Error(`batch: ${JSON.stringify(done.request_counts)}`);
    return LINES / ((performance.now() - t0) / 1000);
  };
  /** @type {number[]} */ const directRates = [];
  /** @type {number[]} */ const batchRates = [];
  for (let r = 0; r < 2; r++) {
    directRates.push(await direct());
    progress(`direct ${r + 1}: ${f1(directRates.at(-1) ?? NaN)} lines/s`);
    batchRates.push(await batched());
    progress(`batch ${r + 1}: ${f1(batchRates.at(-1) ?? NaN)} lines/s`);
  }
  const best = (/** @type {number[]} */ xs) => Math.max(...xs);

  const p = (/** @type {number[]} */ xs, /** @type {number} */ q) => quantile(xs, q);
  const lines = [
    START,
    "",
    "| interactive TTFT (ms), streamed, 1 client | p50 | p99 | n |",
    "|---|---|---|---|",
    `| no batch | ${f1(p(without, 0.5))} | ${f1(p(without, 0.99))} | ${without.length} |`,
    `| a 2,000-line batch running | ${f1(p(withBatch, 0.5))} | ${f1(p(withBatch, 0.99))} | ${withBatch.length} |`,
    `| ratio | **${(p(withBatch, 0.5) / p(without, 0.5)).toFixed(2)}×** | **${(p(withBatch, 0.99) / p(without, 0.99)).toFixed(2)}×** | |`,
    "",
    `The batch ran ${linesDuring} lines during the ${ROUNDS} "with" rounds.`,
    "",
    `| ${LINES} lines of ~15 tokens, idle pool (lines/s, best of 2) | rate |`,
    "|---|---|",
    `| straight to llama-server, ${SLOTS} at a time | ${f1(best(directRates))} |`,
    `| a batch through Switchyard (create → completed) | ${f1(best(batchRates))} |`,
    `| ratio | **${(best(batchRates) / best(directRates)).toFixed(2)}×** |`,
    "",
    `\`flock /tmp/sy-servers.lock npx node bench/batch-idle.mjs --rounds ${ROUNDS} --requests ${REQUESTS} --lines ${LINES}\`, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC.`,
    "",
    END,
  ];
  console.log(lines.join("\n"));
  if (flags.write) {
    writeFileSync(flags.write, replaceMarkedBlock(readFileSync(flags.write, "utf8"), START, END, lines.join("\n"), HEADING));
  }
} finally {
  await proxy.stop();
  await llama.stop();
}
