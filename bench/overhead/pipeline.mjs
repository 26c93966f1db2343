// CPU per request of the Worker's stream pipeline in Node (performance.now() inside a Worker only
// advances on I/O): recorded llama-server streams (test/fixtures/llama/stream-*.sse) and a synthetic
// 1,000-token stream with two tool calls written as text, with and without tool-call rewriting.
// Bundles bench/overhead/pipeline-entry.ts (and so src/) with esbuild, like bench/toolcalls.
//   npx node bench/overhead/pipeline.mjs [--runs 300]      (add --cpu-prof to profile)
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import { TOOLS, sseOf, splitDeltas, toolText } from "./upstream.mjs";

const ROOT = resolve(import.meta.dirname, "../..");

/** bench/overhead/pipeline-entry.ts of this tree, or of another checkout (`root`), bundled and loaded. */
export async function loadPipeline(root = ROOT) {
  const { build } = await import(pathToFileURL(join(ROOT, "node_modules/esbuild/lib/main.js")).href);
  const outfile = join(mkdtempSync(join(tmpdir(), "switchyard-pipeline-")), "pipeline.mjs");
  await build({ entryPoints: [join(root, "bench/overhead/pipeline-entry.ts")], bundle: true, format: "esm", platform: "neutral", mainFields: ["module", "main"], outfile, logLevel: "warning" });
  return import(pathToFileURL(outfile).href);
}

const enc = new TextEncoder();
/** One network read per SSE frame, as llama-server writes them. */
const framesOf = (text) => text.split(/(?<=\n\n)/).filter(Boolean).map((f) => enc.encode(f));

export function workloads() {
  const dir = join(ROOT, "test/fixtures/llama");
  const recorded = readdirSync(dir).filter((f) => f.startsWith("stream-") && f.endsWith(".sse")).map((f) => framesOf(readFileSync(join(dir, f), "utf8")));
  const synthetic = framesOf(sseOf(splitDeltas(toolText())).join(""));
  return { recorded, synthetic, syntheticTokens: Math.round(toolText().length / 4) };
}

/** CPU ms per run (process.cpuUsage), wall p50/p99 per run, frames per run. */
async function time(run, streams, tools, runs) {
  const frames = streams.reduce((n, s) => n + s.length, 0);
  for (let i = 0; i < Math.min(50, runs); i++) for (const s of streams) await run(s, tools);
  const wall = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    for (const s of streams) await run(s, tools);
    wall.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  wall.sort((a, b) => a - b);
  const cpuMs = (cpu.user + cpu.system) / 1000 / runs;
  return { frames, cpuMs, nsPerFrame: (cpuMs * 1e6) / frames, p50: wall[Math.floor(runs / 2)], p99: wall[Math.floor(runs * 0.99)] };
}

export async function measurePipeline({ runs = 300 } = {}) {
  const { runPipeline, runPure } = await loadPipeline();
  const w = workloads();
  const pure = async (s, tools) => runPure(s, tools);
  return {
    purePlain: await time(pure, [w.synthetic], undefined, runs * 2),
    pureTools: await time(pure, [w.synthetic], TOOLS, runs * 2),
    syntheticTokens: w.syntheticTokens,
    recordedCount: w.recorded.length,
    recordedPlain: await time(runPipeline, w.recorded, undefined, runs),
    recordedTools: await time(runPipeline, w.recorded, TOOLS, runs),
    syntheticPlain: await time(runPipeline, [w.synthetic], undefined, runs),
    syntheticTools: await time(runPipeline, [w.synthetic], TOOLS, runs),
  };
}

/** Per workload, the run with the median CPU time among several `measurePipeline` results. */
export function pipelineMedian(runs) {
  const out = { ...runs[0] };
  for (const [k, v] of Object.entries(runs[0])) {
    if (!v || typeof v !== "object" || !("cpuMs" in v)) continue;
    const sorted = runs.map((r) => r[k]).sort((a, b) => a.cpuMs - b.cpuMs);
    out[k] = sorted[Math.floor(sorted.length / 2)];
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const i = process.argv.indexOf("--runs");
  const r = await measurePipeline({ runs: i > 0 ? Number(process.argv[i + 1]) : 300 });
  console.log(JSON.stringify(r, null, 2));
}
