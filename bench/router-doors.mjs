#!/usr/bin/env node
// Router-mode loads when a team's requests spread over doors (docs/benchmarks.md, "Many isolates, one
// pool"): two real llama-server routers over one models dir (`--models-max 1 -np 2 -t 1 --poll 0`,
// test/support/router-pool.mjs) before one door and before three (test/support/doors.mjs), fresh each
// run. A run: six requests for one model at once (a burst, nothing loaded), then two clients
// alternating two models, 20 requests each, every request at a door at random. Counted from the
// routers' own logs: the loads each phase made. Side by side in one run, R runs of each.
//   flock /tmp/sy-servers.lock node bench/router-doors.mjs [--runs 5]
import { parseArgs } from "node:util";
import { startDoors } from "../test/support/doors.mjs";
import { alternateModels, ask, startRouters } from "../test/support/router-pool.mjs";

const { values: flags } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const RUNS = Number(flags.runs);

/** @param {number} doorCount @returns {Promise<{ burst: number, alternating: number, ok: boolean }>} */
async function run(doorCount) {
  const pool = await startRouters({ count: 2, modelsMax: 1 });
  const doors = await startDoors(doorCount, { vars: { SWITCHYARD_CONFIG: { routers: pool.routers.map((r) => ({ url: r.url })) } } });
  try {
    let ok = true;
    const burst = await Promise.all(Array.from({ length: 6 }, (_, i) => ask(doors.at(i), "alpha", { stream: i % 2 === 1 })));
    ok &&= burst.every((r) => r.status === 200 && r.content === "hi from alpha");
    const afterBurst = pool.totalLoads();
    for (const r of await alternateModels(() => doors.any())) ok &&= r.status === 200 && r.content === `hi from ${r.model}`;
    return { burst: afterBurst, alternating: pool.totalLoads() - afterBurst, ok };
  } finally {
    await doors.stop();
    await pool.stop();
  }
}

/** @type {Record<number, Array<{ burst: number, alternating: number, ok: boolean }>>} */
const results = { 1: [], 3: [] };
const started = Date.now();
for (let r = 0; r < RUNS; r++) {
  for (const n of [1, 3]) {
    const row = await run(n);
    console.log(JSON.stringify({ doors: n, ...row }));
    results[n].push(row);
  }
}
const list = (/** @type {number[]} */ xs) => xs.join(", ");
console.log(`\nMeasured ${new Date().toISOString().slice(0, 10)} with \`flock /tmp/sy-servers.lock node bench/router-doors.mjs --runs ${RUNS}\` (${Math.round((Date.now() - started) / 1000)} s):\n`);
console.log("| doors | loads of the burst of 6 (per run) | loads of the 40 alternating requests (per run) | every answer exact |");
console.log("|---|---|---|---|");
for (const n of [1, 3]) console.log(`| ${n} | ${list(results[n].map((r) => r.burst))} | ${list(results[n].map((r) => r.alternating))} | ${results[n].every((r) => r.ok) ? "yes" : "no"} |`);
