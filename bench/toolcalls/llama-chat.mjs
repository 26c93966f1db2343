#!/usr/bin/env node
// llama.cpp's own chat-parser cases through the tool-call rewriter (docs/benchmarks.md, "llama.cpp's
// chat-parser cases"): the pass rate per template, one-shot and streamed at random split points.
//   node bench/toolcalls/llama-chat.mjs [--splits N] [--only SUBSTRING] [--failures] [--deliberate]
// The cases are test/fixtures/llama-chat (scripts/llama-chat-fixtures.mjs regenerates them), then, in a
// second table, test/fixtures/template-cases.json: cases written from the templates llama.cpp ships
// without a test-chat.cpp case. npm test runs the same cases (test/unit/toolcalls/llama-chat-corpus.test.ts).

import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadBundle } from "./build-engine.mjs";

/**
 * @typedef {typeof import("../../test/support/llama-chat-corpus.ts")} Corpus
 * @typedef {import("../../test/support/llama-chat-corpus.ts").LlamaChatCase} LlamaChatCase
 * @typedef {import("../../test/support/llama-chat-corpus.ts").CaseOutcome} CaseOutcome
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const { values: flags } = parseArgs({
  options: { splits: { type: "string", default: "8" }, only: { type: "string", default: "" }, failures: { type: "boolean" }, deliberate: { type: "boolean" } },
});
const splits = Number(flags.splits);
const only = flags.only;

const corpus = /** @type {Corpus} */ (await loadBundle(repoRoot, "test/support/llama-chat-corpus.ts"));

const dir = join(repoRoot, "test/fixtures/llama-chat");
/** @type {import("../../test/support/llama-chat-corpus.ts").LlamaChatTools} */
const tools = JSON.parse(readFileSync(join(dir, "tools.json"), "utf8"));
// Cases Switchyard answers differently on purpose: what it answers instead, and why (docs/tool-calls.md).
/** @type {Record<string, import("../../test/support/llama-chat-corpus.ts").Difference>} */
const DIFFERENCES = JSON.parse(readFileSync(join(repoRoot, "test/fixtures/llama-chat-differences.json"), "utf8"));
const files = readdirSync(dir).filter((f) => f.endsWith(".json") && f !== "tools.json").sort();

/** @type {CaseOutcome[]} */
const failures = [];
/** @type {CaseOutcome[]} */
const deliberate = [];
const started = performance.now();

/**
 * One table row per template: its cases run one-shot and streamed.
 * @param {Array<[string, LlamaChatCase[]]>} groups
 */
function runGroups(groups) {
  const rows = [];
  let total = 0;
  let passed = 0;
  for (const [template, all] of groups) {
    const cases = all.filter((c) => c.id.includes(only));
    if (cases.length === 0) continue;
    let ok = 0;
    let diff = 0;
    for (const c of cases) {
      const o = corpus.runCase(c, tools, DIFFERENCES, splits);
      if (o.pass) ok++;
      else failures.push(o);
      if (o.deliberate) {
        diff++;
        deliberate.push(o);
      }
    }
    total += cases.length;
    passed += ok;
    rows.push({ template, format: cases[0].format, cases: cases.length, ok, diff });
  }
  return { rows, total, passed };
}

const llama = runGroups(files.map((f) => [f.replace(/\.json$/, ""), JSON.parse(readFileSync(join(dir, f), "utf8"))]));
// Cases written from the templates llama.cpp ships without a test-chat.cpp case, one group per template.
/** @type {Map<string, LlamaChatCase[]>} */
const fromTemplates = new Map();
/** @type {LlamaChatCase[]} */
const templateCases = JSON.parse(readFileSync(join(repoRoot, "test/fixtures/template-cases.json"), "utf8"));
for (const c of templateCases) {
  const template = c.template.replace(/^.*\//, "").replace(/\.jinja$/, "");
  fromTemplates.set(template, [...(fromTemplates.get(template) ?? []), c]);
}
const written = runGroups([...fromTemplates]);
const ms = performance.now() - started;

const pct = (/** @type {number} */ passed, /** @type {number} */ total) => (total === 0 ? "–" : `${((100 * passed) / total).toFixed(1)} %`);
console.log(`| template | llama.cpp parser | cases | pass | of which a deliberate difference |`);
console.log(`|---|---|---:|---:|---:|`);
for (const r of llama.rows) console.log(`| ${r.template} | ${r.format} | ${r.cases} | ${r.ok} | ${r.diff || ""} |`);
console.log(`| **all** | | **${llama.total}** | **${llama.passed}** (${pct(llama.passed, llama.total)}) | ${deliberate.length} |`);
console.log(`\nCases written from the templates llama.cpp ships without test cases (test/fixtures/template-cases.json):\n`);
console.log(`| template | cases | pass |`);
console.log(`|---|---:|---:|`);
for (const r of written.rows) console.log(`| ${r.template} (from the template) | ${r.cases} | ${r.ok} |`);
console.log(`| **all** | **${written.total}** | **${written.passed}** (${pct(written.passed, written.total)}) |`);
const total = llama.total + written.total;
console.log(`\n${total} cases (${llama.total} of llama.cpp's, ${written.total} from the templates), each one-shot and streamed ${splits + 2} ways (one character at a time, whole, ${splits} random splits), in ${(ms / 1000).toFixed(1)} s.`);
if (flags.failures || failures.length > 0) {
  for (const o of failures) {
    console.log(`\nFAIL ${o.id}\n  expected ${JSON.stringify(o.expected)}\n  one-shot ${JSON.stringify(o.oneShot)}`);
    if (o.streamMismatch) console.log(`  streamed ${JSON.stringify(o.streamMismatch.got)} (split ${JSON.stringify(o.streamMismatch.chunks.slice(0, 12))}…)`);
  }
}
if (flags.deliberate) for (const o of deliberate) console.log(`- ${o.id}: ${o.deliberate}`);
process.exitCode = failures.length > 0 ? 1 : 0;
