#!/usr/bin/env node
// Continuing an interrupted answer: what a llama-server dying mid-answer costs the client when
// Switchyard continues the answer on another server (src/routing/continuation/), against the answer not
// being interrupted and against the client starting over. Everything is real: llama-servers with the
// project's tiny random-weight test model (1 slot, 1 thread each), Switchyard under `wrangler dev`
// (test/support/switchyard-dev.mjs), streams read with eventsource-parser.
//
// Each round, side by side on the same machine:
//   uninterrupted  the answer streamed whole from the spare server (model `spare`);
//   resumed        the same answer from model `r<i>` = [victim i, spare]: victim i is killed with
//                  SIGKILL once `--kill-at` of the text (a fraction, default half) has arrived, and
//                  the spare continues;
// and from those, the client that starts over: the time until the kill, then an uninterrupted answer.
// The answer is forced by a one-literal grammar (`--words` words), so every run writes the same text,
// and a resumed answer that is not exactly that text fails the run.
// Figures per round: the gap (from the kill to the next content frame the client gets), the median
// gap between content frames of the uninterrupted answer, and each answer's total time.
//
//   npx node bench/resume.mjs [--rounds 8] [--words 60] [--kill-at 0.5] [--write]
// About 2 minutes on 2 shared cores. --write replaces the block between the resume markers in
// docs/benchmarks.md.
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { readChatStream } from "./chat-stream.mjs";
import { literalGrammar, startLlamaServer } from "../test/support/llama-server.mjs";
import { startSwitchyard } from "../test/support/switchyard-dev.mjs";
import { replaceMarkedBlock } from "./doc-block.mjs";

const { values: flags } = parseArgs({
  strict: true,
  options: { rounds: { type: "string", default: "8" }, words: { type: "string", default: "60" }, "kill-at": { type: "string", default: "0.5" }, write: { type: "boolean", default: false } },
});
const rounds = Number(flags.rounds);
const text = Array.from({ length: Number(flags.words) }, (_, i) => `w${i}`).join(" ");
const KILL_AFTER_CHARS = Math.round(text.length * Number(flags["kill-at"]));

/** @typedef {import("../test/support/llama-server.mjs").LlamaServer} LlamaServer */

/**
 * Streams one answer; `onText(sofar)` after each content frame. Returns the text, the time of every
 * content frame (ms since the request), the total, and x_switchyard.
 * @param {string} url @param {string} model @param {(sofar: string) => void} [onText]
 */
async function stream(url, model, onText) {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream: true, temperature: 0, max_tokens: 2000, messages: [{ role: "user", content: "go" }], grammar: literalGrammar(text) }),
  });
  if (res.status !== 200) throw new Error(`${model}: HTTP ${res.status} ${await res.text()}`);
  /** @type {number[]} */
  const at = [];
  const { content: out, ext, problems } = await readChatStream(/** @type {AsyncIterable<Uint8Array>} */ (res.body), (sofar) => {
    at.push(performance.now() - t0);
    onText?.(sofar);
  });
  if (problems.length) throw new Error(`${model}: ${problems.join("; ")}`);
  if (out !== text) throw new Error(`${model}: the answer was not the text (${out.length} of ${text.length} characters)`);
  return { at, total: performance.now() - t0, ext };
}

const median = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const gaps = (/** @type {number[]} */ at) => at.slice(1).map((t, i) => t - at[i]);

/** @type {LlamaServer[]} */
let servers = [];
/** @type {{ stop(): Promise<void>, url: string } | undefined} */
let proxy;
try {
  servers = await Promise.all(Array.from({ length: rounds + 1 }, () => startLlamaServer({ parallel: 1, args: ["-t", "1"] })));
  const spare = servers[rounds];
  const models = Object.fromEntries(servers.slice(0, rounds).map((v, i) => [`r${i}`, { targets: [{ kind: "llama", url: v.url }, { kind: "llama", url: spare.url }] }]));
  proxy = await startSwitchyard({ vars: { SWITCHYARD_CONFIG: { models: { ...models, spare: { targets: [{ kind: "llama", url: spare.url }] } } } } });
  const url = proxy.url;
  await stream(url, "spare"); // warm-up: the spare's prompt cache, wrangler's first request
  /** @type {Array<{ gap: number, frameGap: number, resumed: number, uninterrupted: number, startOver: number, afterChars: number }>} */
  const rows = [];
  for (let i = 0; i < rounds; i++) {
    const plain = await stream(url, "spare");
    let killedAt = 0;
    /** @type {number | undefined} */
    let gap;
    const t0 = performance.now();
    const resumed = await stream(url, `r${i}`, (sofar) => {
      if (!killedAt && sofar.length >= KILL_AFTER_CHARS) {
        killedAt = performance.now();
        servers[i].kill("SIGKILL");
      } else if (killedAt && gap === undefined) gap = performance.now() - killedAt;
    });
    const killMs = killedAt - t0;
    const afterChars = resumed.ext?.resumes?.[0]?.after_chars;
    if (typeof afterChars !== "number" || gap === undefined) throw new Error(`r${i}: not resumed (${JSON.stringify(resumed.ext)})`);
    rows.push({ gap, frameGap: median(gaps(plain.at)), resumed: resumed.total, uninterrupted: plain.total, startOver: killMs + plain.total, afterChars });
    console.log(`round ${i + 1}/${rounds}: gap ${gap.toFixed(0)} ms (frames ${median(gaps(plain.at)).toFixed(1)} ms apart), resumed ${resumed.total.toFixed(0)} ms, uninterrupted ${plain.total.toFixed(0)} ms, after ${afterChars} chars`);
  }
  const m = (/** @type {(r: typeof rows[number]) => number} */ f) => median(rows.map(f));
  const section = [
    "<!-- resume:start (written by bench/resume.mjs --write) -->",
    "",
    "`npx node bench/resume.mjs --write` (bench/resume.mjs): llama-servers with the tiny test model (1 slot,",
    `1 thread each) under \`wrangler dev\`; ${rounds} rounds. Each round streams the same ${text.length}-character answer (a`,
    "one-literal grammar) uninterrupted from the spare, then from a model [victim, spare] whose victim is",
    `killed (SIGKILL) once ${KILL_AFTER_CHARS} characters have arrived; the spare continues it. "Start over" is`,
    "a client that retries from scratch: the time until the kill plus an uninterrupted answer.",
    "",
    "| figure (median of rounds) | value |",
    "|---|---|",
    `| the silence at the kill (kill → next content frame) | ${m((r) => r.gap).toFixed(0)} ms |`,
    `| the usual gap between content frames | ${m((r) => r.frameGap).toFixed(1)} ms |`,
    `| silence ÷ usual gap | ${m((r) => r.gap / r.frameGap).toFixed(0)}× |`,
    `| resumed answer ÷ uninterrupted answer (total time) | ${m((r) => r.resumed / r.uninterrupted).toFixed(2)} |`,
    `| start over ÷ resumed (total time) | ${m((r) => r.startOver / r.resumed).toFixed(2)} |`,
    `| characters written before the kill | ${m((r) => r.afterChars).toFixed(0)} |`,
    "",
    `Every resumed answer was exactly the text. Node ${process.version}, load average ${loadavg()[0].toFixed(2)} at the end.`,
    "",
    "The silence is the failure being noticed (a killed server's connection resets at once; a stalled one",
    "takes `timeouts.idleMs`), the continuation's request, and the spare's prefill of the prompt plus the",
    "text so far. The tiny model prefills in milliseconds; with a real model the silence grows by that",
    "prefill (the text so far ÷ the server's `prompt_per_second`), still far less than generating it again.",
    "",
    "<!-- resume:end -->",
  ].join("\n");
  console.log(`\n${section}`);
  if (flags.write) {
    const file = new URL("../docs/benchmarks.md", import.meta.url);
    const doc = readFileSync(file, "utf8");
    const next = replaceMarkedBlock(doc, "<!-- resume:start", "<!-- resume:end -->", section, "## Continuing an interrupted answer");
    writeFileSync(file, next);
    console.log("wrote docs/benchmarks.md");
  }
} finally {
  await proxy?.stop();
  await Promise.all(servers.map((s) => s.stop()));
}
