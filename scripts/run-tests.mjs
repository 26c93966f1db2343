#!/usr/bin/env node
// Runs the test layers that start servers (npm test runs it after the static checks): vitest (unit,
// then the Worker, fault and fuzz tests in workerd) and the end-to-end files side by side in two
// lanes, then the few end-to-end files that measure time or memory, alone. Each lane waits on
// servers far more than it computes (vitest ~0.6 of a core, one e2e file at a time ~0.5), so on two
// cores the lanes overlap instead of queueing; a file that asserts a latency, an RSS slope or a
// restart bound runs with nothing beside it, as it always did. Every lane runs to its end; the exit
// code is 1 if any failed. Output lines carry their lane's name.
//   node scripts/run-tests.mjs                       both lanes, then the alone files
//   node scripts/run-tests.mjs --only e2e            only the end-to-end files (the lane, then alone)
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
const shared = endToEnd.filter((f) => !ALONE.has(f));

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
const lanes = [];
if (only !== "e2e") lanes.push(lane("vitest", process.execPath, [join("node_modules", "vitest", "vitest.mjs"), "run"]));
if (only !== "vitest") lanes.push(lane("e2e", process.execPath, nodeTest(shared)));
const results = await Promise.all(lanes);
if (only !== "vitest") results.push(await lane("e2e-alone", process.execPath, nodeTest([...ALONE.keys()])));
const total = Math.round((Date.now() - started) / 1000);
for (const r of results) process.stdout.write(`[run-tests] ${r.name}: ${r.code === 0 ? "passed" : `FAILED (exit ${r.code})`} in ${r.seconds} s\n`);
process.stdout.write(`[run-tests] ${total} s in all\n`);
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
