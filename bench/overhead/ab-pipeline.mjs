#!/usr/bin/env node
// CPU of the pure pipeline (bench/overhead/pipeline-entry.ts runPure: the 1,000-token answer, with and
// without tools) for two revisions side by side in one Node process: A from a git revision, B from the
// working tree unless --b names one. Both bundles are warmed up, then batches alternate, so the
// machine's noise and V8's state hit both alike. For A/B checks of a hot-path change, which
// `pipeline.mjs` in fresh processes (±0.3 ms from process to process) would hide.
//   npx node bench/overhead/ab-pipeline.mjs [--a HEAD] [--b <rev>] [--rounds 30] [--batch 100]
import { parseArgs } from "node:util";
import { loadPipeline, workloads } from "./pipeline.mjs";
import { checkoutRevision } from "./runtimes.mjs";
import { TOOLS } from "./upstream.mjs";

const { values: flags } = parseArgs({
  options: { a: { type: "string", default: "HEAD" }, b: { type: "string" }, rounds: { type: "string", default: "30" }, batch: { type: "string", default: "100" } },
});
const ROUNDS = Number(flags.rounds);
const BATCH = Number(flags.batch);

/** @type {Array<{ cleanup(): void }>} */
const checkouts = [];
/**
 * runPure of `rev` (a git revision) or of the working tree (`rev` undefined).
 * @param {string | undefined} rev
 */
async function load(rev) {
  if (!rev) return (await loadPipeline()).runPure;
  const checkout = checkoutRevision(rev);
  checkouts.push(checkout);
  return (await loadPipeline(checkout.dir)).runPure;
}

try {
  const runs = { A: await load(flags.a), B: await load(flags.b) };
  const { synthetic } = workloads();
  /** @type {Array<[string, typeof TOOLS | undefined]>} */
  const toolSets = [["no tools", undefined], ["with tools", TOOLS]];
  /** @type {Array<"A" | "B">} */
  const AB = ["A", "B"];
  for (const [label, tools] of toolSets) {
    for (let i = 0; i < 300; i++) for (const f of Object.values(runs)) f(synthetic, tools);
    const us = { A: 0, B: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of r % 2 ? AB.toReversed() : AB) {
        const c0 = process.cpuUsage();
        for (let i = 0; i < BATCH; i++) runs[k](synthetic, tools);
        const c = process.cpuUsage(c0);
        us[k] += c.user + c.system;
      }
    }
    const ms = (/** @type {"A" | "B"} */ k) => us[k] / 1000 / (ROUNDS * BATCH);
    console.log(`pure pipeline, 1,000-token answer ${label}: A (${flags.a}) ${ms("A").toFixed(3)} ms, B (${flags.b ?? "working tree"}) ${ms("B").toFixed(3)} ms, B/A ${(ms("B") / ms("A")).toFixed(3)}`);
  }
} finally {
  for (const c of checkouts) c.cleanup();
}
