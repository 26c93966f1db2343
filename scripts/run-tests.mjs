#!/usr/bin/env node
// Runs the test layers that start servers (npm test runs it after the static checks): first the unit
// tests alone (they hold time budgets for hostile inputs: a neighbour's load would be theirs), then
// the Worker, fault and fuzz tests in workerd and the end-to-end files side by side in two lanes,
// then the few end-to-end files that measure time or memory, alone. In the middle step one lane runs
// the Worker tests and then takes end-to-end files from the queue the other lane works through, so
// both end together; each waits on servers far more than it computes (the Worker tests ~0.6 of a
// core, one e2e file ~0.5), so on two cores they overlap instead of queueing. A file that asserts a
// latency, an RSS slope or a restart bound runs with nothing beside it, as it always did. Every step runs to its
// end; the exit code is 1 if any failed. Output lines carry their lane's name.
//   node scripts/run-tests.mjs                       all of it
//   node scripts/run-tests.mjs --only e2e            only the end-to-end files (the lane, then alone)
//   node scripts/run-tests.mjs --only vitest         only vitest's projects
import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * End-to-end files that measure the machine, run with nothing beside them: their bounds are about
 * Switchyard, not about a neighbour's load.
 */
const ALONE = new Map([
  ["test/e2e/admission-memory.test.mjs", "workerd's RSS slope over 35 s with 1,000 waiting streams"],
  ["test/e2e/observability.test.mjs", "the median answer time with a hanging collector against a healthy one"],
  ["test/e2e/churn.test.mjs", "restarted servers serve again within 2 s"],
  ["test/faults/llama-killed.test.mjs", "a stream ends within 1 s of its server's kill"],
]);

/** @param {string} dir */
const files = (dir) =>
  (existsSync(dir) ? readdirSync(dir) : [])
    .filter((f) => f.endsWith(".test.mjs"))
    .sort()
    .map((f) => join(dir, f));
const endToEnd = [...files("test/e2e"), ...files("test/multi"), ...files("test/faults")];
for (const f of ALONE.keys()) if (!endToEnd.includes(f)) throw new Error(`run-tests: ${f} is listed to run alone but does not exist`);

/**
 * Seconds each long end-to-end file took here (6 Dec), only to start the longest first so the two
 * lanes end together; a file not listed (a new one) counts as long, and goes early.
 */
const SECONDS = new Map([
  ["test/e2e/coding-agents.test.mjs", 160],
  ["test/e2e/browser-gguf.test.mjs", 120],
  ["test/e2e/auth-keys.test.mjs", 85],
  ["test/e2e/coding-agents-llama.test.mjs", 70],
  ["test/e2e/browser-relay.test.mjs", 55],
  ["test/e2e/browser-page.test.mjs", 55],
  ["test/e2e/codex-compaction.test.mjs", 55],
  ["test/e2e/launcher.test.mjs", 55],
  ["test/e2e/api-clients.test.mjs", 45],
  ["test/e2e/admission-llama.test.mjs", 45],
  ["test/e2e/router-pool.test.mjs", 45],
  ["test/e2e/chat-clients.test.mjs", 30],
  ["test/e2e/spec-conformance.test.mjs", 30],
  ["test/e2e/stored-responses.test.mjs", 30],
  ["test/e2e/browser-token.test.mjs", 30],
  ["test/e2e/router-zero-config.test.mjs", 25],
  ["test/e2e/admission-one-slot-llama.test.mjs", 25],
  ["test/e2e/proxy.test.mjs", 25],
  ["test/e2e/openai-upstream.test.mjs", 25],
  ["test/e2e/llama-server-harness.test.mjs", 25],
  ["test/e2e/tool-calls.test.mjs", 20],
  ["test/e2e/launcher-port.test.mjs", 15],
  ["test/e2e/launcher-status-link.test.mjs", 15],
  ["test/e2e/launcher-secrets.test.mjs", 12],
  ["test/e2e/page-build.test.mjs", 6],
]);
/** The files that share the machine, longest first: one queue both lanes take from. */
const shared = endToEnd.filter((f) => !ALONE.has(f)).sort((a, b) => (SECONDS.get(b) ?? 200) - (SECONDS.get(a) ?? 200));

/**
 * Runs one command, its output's lines prefixed with `name`; resolves to its exit code.
 * @param {string} name @param {string} cmd @param {string[]} args
 * @returns {Promise<{ name: string, code: number, seconds: number }>}
 */
function lane(name, cmd, args) {
  const started = Date.now();
  process.stdout.write(`[${name}] ${cmd} ${args.join(" ")}\n`);
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: process.env });
  const prefix = (/** @type {NodeJS.WritableStream} */ out) => {
    let rest = "";
    return {
      write: (/** @type {string} */ s) => {
        const lines = (rest + s).split("\n");
        rest = lines.pop() ?? "";
        for (const l of lines) out.write(`[${name}] ${l}\n`);
      },
      end: () => rest && out.write(`[${name}] ${rest}\n`),
    };
  };
  const out = prefix(process.stdout);
  const err = prefix(process.stderr);
  child.stdout.setEncoding("utf8").on("data", out.write);
  child.stderr.setEncoding("utf8").on("data", err.write);
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      out.end();
      err.end();
      resolve({ name, code: code ?? (signal ? 1 : 0), seconds: Math.round((Date.now() - started) / 1000) });
    }),
  );
}

const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
const nodeTest = (/** @type {string[]} */ list) => ["--test", "--test-concurrency=1", "--test-reporter=spec", ...list];
const started = Date.now();
const vitest = (/** @type {string[]} */ projects) => [join("node_modules", "vitest", "vitest.mjs"), "run", ...projects.flatMap((p) => ["--project", p])];
const results = [];
if (only !== "e2e") results.push(await lane("unit", process.execPath, vitest(["unit"])));
const queue = only === "vitest" ? [] : [...shared];
/** A lane's share of the end-to-end files: the next in the queue until none is left. */
const takeFromQueue = async (/** @type {string} */ name) => {
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) results.push({ ...(await lane(name, process.execPath, nodeTest([file]))), name: `${name} ${file}` });
};
await Promise.all([
  (async () => {
    if (only !== "e2e") results.push(await lane("worker", process.execPath, vitest(["worker"])));
    await takeFromQueue("e2e-b");
  })(),
  takeFromQueue("e2e-a"),
]);
if (only !== "vitest") results.push(await lane("e2e-alone", process.execPath, nodeTest([...ALONE.keys()])));
const total = Math.round((Date.now() - started) / 1000);
for (const r of results) process.stdout.write(`[run-tests] ${r.name}: ${r.code === 0 ? "passed" : `FAILED (exit ${r.code})`} in ${r.seconds} s\n`);
process.stdout.write(`[run-tests] ${total} s in all\n`);
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
