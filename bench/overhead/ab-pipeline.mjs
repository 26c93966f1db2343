#!/usr/bin/env node
// CPU of the pure pipeline (bench/overhead/pipeline-entry.ts runPure: the 1,000-token answer, with and
// without tools) for two revisions side by side in one Node process: A from a git revision, B from the
// working tree unless --b names one. Both bundles are warmed up, then batches alternate, so the
// machine's noise and V8's state hit both alike. For A/B checks of a hot-path change, which
// `pipeline.mjs` in fresh processes (±0.3 ms from process to process) would hide.
//   npx node bench/overhead/ab-pipeline.mjs [--a HEAD] [--b <rev>] [--rounds 30] [--batch 100]
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { workloads } from "./pipeline.mjs";
import { TOOLS } from "./upstream.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const argv = process.argv.slice(2);
const opt = (n, d) => (argv.includes(`--${n}`) ? argv[argv.indexOf(`--${n}`) + 1] : d);
const ROUNDS = Number(opt("rounds", 30));
const BATCH = Number(opt("batch", 100));

mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
const work = mkdtempSync(join(ROOT, ".wrangler", "ab-pipeline-"));
const { build } = await import(pathToFileURL(join(ROOT, "node_modules/esbuild/lib/main.js")).href);

/** runPure of `rev` (a git revision) or of the working tree (`rev` undefined). */
async function load(rev, name) {
  let root = ROOT;
  if (rev) {
    root = join(work, `${name}-src`);
    mkdirSync(root);
    execFileSync("sh", ["-c", `git archive ${rev} src bench | tar -x -C ${root}`], { cwd: ROOT });
    symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  }
  const outfile = join(work, `${name}.mjs`);
  await build({ entryPoints: [join(root, "bench/overhead/pipeline-entry.ts")], bundle: true, format: "esm", platform: "neutral", mainFields: ["module", "main"], outfile, logLevel: "warning" });
  return (await import(pathToFileURL(outfile).href)).runPure;
}

try {
  const runs = { A: await load(opt("a", "HEAD"), "A"), B: await load(opt("b", undefined), "B") };
  const { synthetic } = workloads();
  for (const [label, tools] of [["no tools", undefined], ["with tools", TOOLS]]) {
    for (let i = 0; i < 300; i++) for (const f of Object.values(runs)) f(synthetic, tools);
    const us = { A: 0, B: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of r % 2 ? ["B", "A"] : ["A", "B"]) {
        const c0 = process.cpuUsage();
        for (let i = 0; i < BATCH; i++) runs[k](synthetic, tools);
        const c = process.cpuUsage(c0);
        us[k] += c.user + c.system;
      }
    }
    const ms = (k) => us[k] / 1000 / (ROUNDS * BATCH);
    console.log(`pure pipeline, 1,000-token answer ${label}: A (${opt("a", "HEAD")}) ${ms("A").toFixed(3)} ms, B (${opt("b", "working tree")}) ${ms("B").toFixed(3)} ms, B/A ${(ms("B") / ms("A")).toFixed(3)}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
