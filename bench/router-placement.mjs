#!/usr/bin/env node
// Issue 29: many models on a few llama-server routers (router mode, `--models-max 1 -np 2 -t 1
// --poll 0`, the tiny test model under several names), placed by Switchyard by which model each
// has loaded, against a pinned baseline (each model always sent straight to one router: model i to
// router i mod servers) and against the placement of a previous commit (--before, default 09d833c,
// the commit before this work: it treated a router like any server). Each arm gets fresh routers;
// Switchyard runs the same configuration in both of its arms: every model declared on every router
// (`model` set), `balance: "least-busy"`. Loads are counted from the routers' own logs.
//
//   flock /tmp/sy-servers.lock npx node bench/router-placement.mjs [--requests 40] [--before 09d833c] [--no-before]
//
// Prints, per scenario (models × servers × clients in flight, each client alternating models), the
// loads and p50/p99 of each arm and the ratios to pinned. Switchyard runs from snapshots of HEAD and
// of --before (git archive), so edits to the tree during a run change nothing. About 2–3 minutes.
import { execSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ask, startRouters } from "../test/support/router-pool.mjs";
import { startSwitchyard } from "../test/support/switchyard-dev.mjs";

const { values: flags } = parseArgs({
  strict: true,
  options: {
    requests: { type: "string", default: "40" },
    before: { type: "string", default: "09d833c" },
    "no-before": { type: "boolean", default: false },
  },
});
const REQUESTS = Number(flags.requests);
const repo = resolve(import.meta.dirname, "..");

/** @param {string} rev */
function snapshot(rev) {
  const dir = mkdtempSync(join(tmpdir(), `switchyard-router-${rev}-`));
  execSync(`git archive ${rev} | tar -x -C ${JSON.stringify(dir)}`, { cwd: repo });
  symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
  execSync("node worker/build.mjs", { cwd: dir, stdio: "ignore" });
  return dir;
}

const SCENARIOS = [
  { models: ["alpha", "beta"], servers: 2, clients: 1 },
  { models: ["alpha", "beta"], servers: 2, clients: 2 },
  { models: ["alpha", "beta", "gamma"], servers: 3, clients: 3 },
  { models: ["alpha", "beta", "gamma"], servers: 2, clients: 2 },
];

/** @param {number[]} xs @param {number} p */
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};

/**
 * `REQUESTS` requests over `clients` clients at once, client c's i-th asking for model (i + c) mod n.
 * @param {(model: string) => string} urlFor
 * @param {string[]} models
 * @param {number} clients
 */
async function workload(urlFor, models, clients) {
  /** @type {number[]} */
  const ms = [];
  let errors = 0;
  const per = Math.ceil(REQUESTS / clients);
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    for (let i = 0; i < per; i++) {
      const model = models[(i + c) % models.length];
      const r = await ask(urlFor(model), model);
      if (r.status !== 200 || r.content !== `hi from ${model}`) errors++;
      ms.push(r.ms);
    }
  }));
  return { ms, errors };
}

/**
 * One arm of one scenario on fresh routers.
 * @param {{ models: string[], servers: number, clients: number }} sc
 * @param {string | null} dir  Switchyard's snapshot, or null: pinned (straight to the routers)
 */
async function arm(sc, dir) {
  const pool = await startRouters({ count: sc.servers, modelsMax: 1 });
  let proxy;
  try {
    let urlFor;
    if (dir) {
      process.chdir(dir);
      const models = Object.fromEntries(sc.models.map((m) => [m, { balance: "least-busy", targets: pool.routers.map((r) => ({ kind: "llama", url: r.url, model: m })) }]));
      proxy = await startSwitchyard({ vars: { SWITCHYARD_CONFIG: { models } } });
      const url = proxy.url;
      urlFor = () => url;
    } else {
      urlFor = (/** @type {string} */ m) => pool.routers[sc.models.indexOf(m) % sc.servers].url;
    }
    const { ms, errors } = await workload(urlFor, sc.models, sc.clients);
    return { loads: pool.totalLoads(), p50: pct(ms, 50), p99: pct(ms, 99), errors };
  } finally {
    await proxy?.stop();
    await pool.stop();
    process.chdir(repo);
  }
}

const after = snapshot("HEAD");
const before = flags["no-before"] ? null : snapshot(flags.before);
const head = execSync("git rev-parse --short HEAD", { cwd: repo, encoding: "utf8" }).trim();
console.log(`router placement: ${REQUESTS} requests per scenario, routers --models-max 1 -np 2; Switchyard ${head}${before ? ` vs ${flags.before}` : ""}; load ${loadavg()[0].toFixed(2)}`);
const rows = [];
try {
  for (const sc of SCENARIOS) {
    const pinned = await arm(sc, null);
    const now = await arm(sc, after);
    const then = before ? await arm(sc, before) : null;
    const name = `${sc.models.length} models × ${sc.servers} servers, ${sc.clients} in flight`;
    const f = (/** @type {number} */ x) => `${x.toFixed(0)} ms`;
    const line = (/** @type {string} */ label, /** @type {{ loads: number, p50: number, p99: number, errors: number }} */ r) =>
      `  ${label.padEnd(10)} loads ${String(r.loads).padStart(2)}  p50 ${f(r.p50).padStart(7)} (${(r.p50 / pinned.p50).toFixed(2)}×)  p99 ${f(r.p99).padStart(7)} (${(r.p99 / pinned.p99).toFixed(2)}×)${r.errors ? `  ${r.errors} errors` : ""}`;
    console.log(`\n${name}`);
    console.log(line("pinned", pinned));
    console.log(line(head, now));
    if (then) console.log(line(flags.before, then));
    rows.push({ name, pinned, now, then });
  }
} finally {
  rmSync(after, { recursive: true, force: true });
  if (before) rmSync(before, { recursive: true, force: true });
}
