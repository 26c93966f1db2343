#!/usr/bin/env node
// Runs npm test's layers (npm test is this script). Two steps:
// 1. two lanes from the start: the static checks (types, the layering rule, the generated files; tsc
//    is one core), then end-to-end files; and the unit tests, then the Worker, fault and fuzz tests
//    in workerd in two vitest processes (each its own servers from test/support/global-setup.ts, and
//    one workerd for most of its files: vitest.config.ts). Every lane whose own work is done takes
//    end-to-end files from one queue, longest first, so they all end together. An end-to-end file
//    waits on servers far more than it computes (~0.5 of a core), so on two cores they overlap
//    instead of queueing. The Worker is built once first (`wrangler deploy --dry-run`) for their
//    `wrangler dev` starts;
// 2. the few end-to-end files that measure time or memory, alone: a file that asserts a latency, an
//    RSS slope or a restart bound runs with nothing beside it, as it always did.
// Every step runs to its end; the exit code is 1 if any failed. Output lines carry their lane's name.
// Long because it holds two timing tables, a line a file (data, not logic).
//   node scripts/run-tests.mjs                       all of it
//   node scripts/run-tests.mjs --only e2e            only the end-to-end files (the lanes, then alone)
//   node scripts/run-tests.mjs --only vitest         only vitest's projects (and the static checks)
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
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
  // The AdmissionHub must answer within 1 s or a door falls back to its own line (and may then
  // over-subscribe a server): on two cores saturated by the lanes it did not, now and then.
  ["test/multi/shared-admission.test.mjs", "no server ever holds more than its slots, across three doors"],
  ["test/multi/shared-limits.test.mjs", "a one-slot server holds across three doors, and queue.maxWaitMs to the 100 ms"],
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
 * Seconds each end-to-end file took here (7 Dec, the 4,096-token test model), only to start the
 * longest first so the lanes end together; a file not listed (a new one) counts as long, and goes early.
 */
const SECONDS = new Map([
  ["test/e2e/coding-agents.test.mjs", 104],
  ["test/e2e/coding-agents-llama.test.mjs", 44],
  ["test/e2e/launcher.test.mjs", 42],
  ["test/e2e/auth-keys.test.mjs", 36],
  ["test/e2e/browser-gguf.test.mjs", 35],
  ["test/multi/doors-share.test.mjs", 33],
  ["test/e2e/admission-llama.test.mjs", 25],
  ["test/e2e/browser-page.test.mjs", 23],
  ["test/e2e/launcher-status-link.test.mjs", 23],
  ["test/e2e/launcher-secrets.test.mjs", 22],
  ["test/e2e/stored-responses.test.mjs", 19],
  ["test/e2e/launcher-port.test.mjs", 19],
  ["test/e2e/proxy.test.mjs", 18],
  ["test/multi/shared-cache.test.mjs", 17],
  ["test/multi/shared-router-loads.test.mjs", 15],
  ["test/e2e/router-pool.test.mjs", 16],
  ["test/e2e/browser-token.test.mjs", 15],
  ["test/e2e/batches.test.mjs", 14],
  ["test/e2e/browser-relay.test.mjs", 14],
  ["test/e2e/api-clients.test.mjs", 13],
  ["test/e2e/chat-clients.test.mjs", 13],
  ["test/e2e/spec-conformance.test.mjs", 13],
  ["test/e2e/openai-upstream.test.mjs", 13],
  ["test/e2e/tool-calls.test.mjs", 13],
  ["test/e2e/codex-compaction.test.mjs", 12],
  ["test/e2e/admission-one-slot-llama.test.mjs", 12],
  ["test/e2e/router-zero-config.test.mjs", 10],
  ["test/e2e/page-build.test.mjs", 8],
  ["test/e2e/llama-server-harness.test.mjs", 3],
]);
/** The files that share the machine, longest first: one queue both lanes take from. */
const shared = endToEnd.filter((f) => !ALONE.has(f)).sort((a, b) => (SECONDS.get(b) ?? 200) - (SECONDS.get(a) ?? 200));

/**
 * Seconds each Worker test file took here (7 Dec, the 4,096-token test model: its tests, and ~3 s more for the files in a workerd
 * of their own, vitest.config.ts's OWN_WORKERD), only to split them into two vitest processes that
 * end together; a file not listed counts as 1 s.
 */
const WORKER_SECONDS = new Map([
  ["test/workerd/admission-queue.test.ts", 40],
  ["test/fuzz/endpoints.fuzz.test.ts", 26],
  ["test/workerd/sessions-silence.test.ts", 22],
  ["test/fuzz/hostile-inputs.test.ts", 20],
  ["test/faults/upstream-faults.test.ts", 15],
  ["test/workerd/limits-in-flight.test.ts", 15],
  ["test/workerd/health-recovery.test.ts", 12],
  ["test/workerd/placement.test.ts", 12],
  ["test/workerd/context-routing.test.ts", 10],
  ["test/workerd/sessions.test.ts", 10],
  ["test/faults/health-and-circuit.test.ts", 9],
  ["test/workerd/chat-tool-calls.test.ts", 9],
  ["test/workerd/request-log.test.ts", 8],
  ["test/workerd/auth-routes.test.ts", 7],
  ["test/workerd/embeddings-failover.test.ts", 7],
  ["test/workerd/limits-far.test.ts", 7],
  ["test/workerd/api-messages.test.ts", 6],
  ["test/workerd/browser-policy.test.ts", 6],
  ["test/workerd/chat-errors.test.ts", 6],
  ["test/workerd/chat-parser-refusal.test.ts", 6],
  ["test/workerd/llama-fixtures.test.ts", 6],
  ["test/faults/browser-loading.test.ts", 5],
  ["test/faults/client-disconnects.test.ts", 5],
  ["test/workerd/auth-limits.test.ts", 5],
  ["test/workerd/charged-work.test.ts", 5],
  ["test/faults/resume.test.ts", 4],
  ["test/workerd/api-completions-embeddings.test.ts", 4],
  ["test/workerd/api-responses.test.ts", 4],
  ["test/workerd/chat-llama.test.ts", 4],
  ["test/workerd/compressed-bodies.test.ts", 4],
  ["test/workerd/hardening-address.test.ts", 4],
  ["test/workerd/hardening-config.test.ts", 4],
  ["test/workerd/hardening-methods.test.ts", 4],
  ["test/workerd/models.test.ts", 3],
  ["test/fuzz/hostile-doors.test.ts", 2],
  ["test/workerd/hardening-tool-schemas.test.ts", 2],
  ["test/workerd/responses-socket.test.ts", 2],
  ["test/workerd/sessions-endpoints.test.ts", 2],
  ["test/workerd/sessions-revocation.test.ts", 2],
  ["test/workerd/sessions-usage.test.ts", 2],
]);

/** The Worker project's files (its include globs in vitest.config.ts). */
function workerFiles() {
  const ts = (/** @type {string} */ dir) =>
    (existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: "utf8" }) : [])
      .filter((f) => f.endsWith(".test.ts"))
      .map((f) => join(dir, f));
  return [...ts("test/workerd"), ...ts("test/faults"), ...ts("test/fuzz")].sort();
}

/**
 * Splits files into n groups of about equal time: longest first, each to the group with least so far.
 * @param {string[]} list @param {number} n
 */
function splitByTime(list, n) {
  const groups = Array.from({ length: n }, () => ({ seconds: 0, files: /** @type {string[]} */ ([]) }));
  const cost = (/** @type {string} */ f) => WORKER_SECONDS.get(f) ?? 1;
  for (const f of [...list].sort((a, b) => cost(b) - cost(a))) {
    const g = groups.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    g.seconds += cost(f);
    g.files.push(f);
  }
  return groups.map((g) => g.files).filter((f) => f.length > 0);
}

/**
 * The machine's busy CPU-seconds so far (Linux /proc/stat; undefined elsewhere), to say how much of
 * the cores each step used: the figure that says whether another lane would help.
 */
function cpuBusySeconds() {
  if (!existsSync("/proc/stat")) return undefined;
  const [user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}
/**
 * The CPU-seconds the suite's own processes used so far (every lane and what it started, once
 * reaped; Linux /proc/self/stat's cutime + cstime): unlike the wall time and the machine's busy
 * cores, it does not grow when something else shares the machine, so two runs compare.
 */
function suiteCpuSeconds() {
  if (!existsSync("/proc/self/stat")) return undefined;
  const stat = readFileSync("/proc/self/stat", "utf8");
  const [cutime, cstime] = stat.slice(stat.lastIndexOf(")") + 2).split(" ").slice(13, 15).map(Number);
  return ((cutime ?? 0) + (cstime ?? 0)) / 100;
}
/** @type {string[]} */
const steps = [];
/** How many of a failed lane's last lines the summary repeats. */
const TAIL_LINES = 120;
/** @type {{ name: string, lines: string[] }[]} */
const failures = [];
/** Runs one step and notes its wall time, the cores it kept busy and the CPU it used. @param {string} name @param {() => Promise<unknown>} run */
async function step(name, run) {
  const t0 = Date.now();
  const c0 = cpuBusySeconds();
  const own0 = suiteCpuSeconds();
  await run();
  const wall = (Date.now() - t0) / 1000;
  const c1 = cpuBusySeconds();
  const own1 = suiteCpuSeconds();
  const cores = c0 === undefined || c1 === undefined || wall === 0 ? "" : `, ${((c1 - c0) / wall).toFixed(2)} cores busy`;
  const own = own0 === undefined || own1 === undefined ? "" : `, ${Math.round(own1 - own0)} CPU-s of its own`;
  steps.push(`${name}: ${Math.round(wall)} s${cores}${own}`);
}

/**
 * Runs one command, its output's lines prefixed with `name`; resolves to its exit code.
 * @param {string} name @param {string} cmd @param {string[]} args
 * @returns {Promise<{ name: string, code: number, seconds: number }>}
 */
function lane(name, cmd, args) {
  const started = Date.now();
  /** The lane's last lines, printed again at the very end if it fails: CI shows the output's tail. */
  const last = /** @type {string[]} */ ([]);
  const keep = (/** @type {string} */ l) => {
    last.push(l);
    if (last.length > TAIL_LINES) last.shift();
  };
  process.stdout.write(`[${name}] ${cmd} ${args.join(" ")}\n`);
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], env: process.env });
  const prefix = (/** @type {NodeJS.WritableStream} */ out) => {
    let rest = "";
    return {
      write: (/** @type {string} */ s) => {
        const lines = (rest + s).split("\n");
        rest = lines.pop() ?? "";
        for (const l of lines) {
          out.write(`[${name}] ${l}\n`);
          keep(l);
        }
      },
      end: () => {
        if (!rest) return;
        out.write(`[${name}] ${rest}\n`);
        keep(rest);
      },
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
      const exit = code ?? (signal ? 1 : 0);
      if (exit !== 0) failures.push({ name, lines: last });
      resolve({ name, code: exit, seconds: Math.round((Date.now() - started) / 1000) });
    }),
  );
}

const only = process.argv.includes("--only") ? process.argv[process.argv.indexOf("--only") + 1] : undefined;
const nodeTest = (/** @type {string[]} */ list) => ["--test", "--test-concurrency=1", "--test-reporter=spec", ...list];
const started = Date.now();
const vitest = (/** @type {string[]} */ args) => [join("node_modules", "vitest", "vitest.mjs"), "run", ...args];
/** @type {{ name: string, code: number, seconds: number }[]} */
const results = [];

/** The static checks: types, the layering rule, the generated files. */
const STATIC = [
  "npm run -s typecheck",
  "node scripts/check-layers.mjs",
  "node scripts/export-config-schema.mjs --check",
  "node scripts/gen-wire-types.mjs --check",
].join(" && ");
/**
 * The Worker as a deploy bundles it (`wrangler deploy --dry-run`), built once for every end-to-end
 * `wrangler dev` start (test/support/switchyard-dev.mjs serves it with `--no-bundle`): about 35 starts
 * each skip bundling `src/` again. The end-to-end lanes wait for it; if it fails, its lane fails and
 * each start bundles as before.
 */
const BUILT = join(".wrangler", "test-build");
rmSync(BUILT, { recursive: true, force: true });
// Only the end-to-end files use it: `--only vitest` skips it.
const built = only === "vitest" ? Promise.resolve() : lane("build", join("node_modules", ".bin", "wrangler"), ["deploy", "--dry-run", "--outdir", BUILT]).then((r) => {
  results.push(r);
  if (existsSync(join(BUILT, "index.js"))) process.env.SWITCHYARD_TEST_WORKER = join(process.cwd(), BUILT, "index.js");
});

/** The end-to-end files that share the machine: one queue the lanes take from once their own work is done. */
const queue = only === "vitest" ? [] : [...shared];
/** A lane's share of the end-to-end files: the next in the queue until none is left. */
const takeFromQueue = async (/** @type {string} */ name) => {
  await built;
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) results.push({ ...(await lane(name, process.execPath, nodeTest([file]))), name: `${name} ${file}` });
};
const workerShards = only === "e2e" ? [] : splitByTime(workerFiles(), 2);
await step("static checks, unit and Worker tests beside end-to-end files", () => Promise.all([
  // The static checks (tsc: one core), then end-to-end files.
  (async () => {
    if (only !== "e2e") results.push(await lane("static", "sh", ["-c", STATIC]));
    await takeFromQueue("e2e-a");
  })(),
  // The unit tests, then the Worker tests in two vitest processes, each joining the queue once done.
  (async () => {
    if (only !== "e2e") results.push(await lane("unit", process.execPath, vitest(["--project", "unit"])));
    await Promise.all([
      ...workerShards.map(async (shard, i) => {
        results.push(await lane(`worker-${i + 1}`, process.execPath, vitest(["--project", "worker", "--project", "worker-isolated", ...shard])));
        await takeFromQueue(`e2e-w${i + 1}`);
      }),
      // Without the Worker tests (--only e2e), a second lane of end-to-end files in their place.
      ...(workerShards.length ? [] : [takeFromQueue("e2e-b")]),
    ]);
  })(),
]));
if (only !== "vitest") await step("end-to-end files alone", async () => results.push(await lane("e2e-alone", process.execPath, nodeTest([...ALONE.keys()]))));
const total = Math.round((Date.now() - started) / 1000);
for (const f of failures) {
  process.stdout.write(`[run-tests] ---- ${f.name} failed; its last ${f.lines.length} lines again ----\n`);
  for (const l of f.lines) process.stdout.write(`[${f.name}] ${l}\n`);
}
for (const r of results) process.stdout.write(`[run-tests] ${r.name}: ${r.code === 0 ? "passed" : `FAILED (exit ${r.code})`} in ${r.seconds} s\n`);
for (const s of steps) process.stdout.write(`[run-tests] step ${s}\n`);
const cpu = suiteCpuSeconds();
process.stdout.write(`[run-tests] ${total} s in all${cpu === undefined ? "" : `, ${Math.round(cpu)} CPU-s of the suite's own processes`}\n`);
process.exit(results.every((r) => r.code === 0) ? 0 : 1);
