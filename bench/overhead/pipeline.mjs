// CPU per request of the Worker's stream pipeline in Node (performance.now() inside a Worker only
// advances on I/O): recorded llama-server streams (test/fixtures/llama/stream-*.sse) and a synthetic
// 1,000-token stream with two tool calls written as text, with and without tool-call rewriting.
// Bundles bench/overhead/pipeline-entry.ts (and so src/) with esbuild, like bench/toolcalls.
//   npx node bench/overhead/pipeline.mjs [--runs 300]      (add --cpu-prof to profile)
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { TOOLS, sseOf, splitDeltas, toolText } from "./upstream.mjs";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * @typedef {import("../../src/toolcalls/index.ts").ToolDefinition} ToolDefinition
 * @typedef {typeof import("./pipeline-entry.ts")} PipelineEntry
 * @typedef {{ frames: number, cpuMs: number, nsPerFrame: number, p50: number, p99: number }} Timing
 * @typedef {Awaited<ReturnType<typeof measurePipeline>>} PipelineResult
 */

/**
 * bench/overhead/pipeline-entry.ts of this tree, or of another checkout (`root`), bundled and loaded.
 * @returns {Promise<PipelineEntry>}
 */
export async function loadPipeline(root = ROOT) {
  const { build } = await import(pathToFileURL(join(ROOT, "node_modules/esbuild/lib/main.js")).href);
  const outfile = join(mkdtempSync(join(tmpdir(), "switchyard-pipeline-")), "pipeline.mjs");
  await build({ entryPoints: [join(root, "bench/overhead/pipeline-entry.ts")], bundle: true, format: "esm", platform: "neutral", mainFields: ["module", "main"], outfile, logLevel: "warning" });
  return import(pathToFileURL(outfile).href);
}

const enc = new TextEncoder();
/** One network read per SSE frame, as llama-server writes them. */
const framesOf = (/** @type {string} */ text) => text.split(/(?<=\n\n)/).filter(Boolean).map((f) => enc.encode(f));

export function workloads() {
  const dir = join(ROOT, "test/fixtures/llama");
  const recorded = readdirSync(dir).filter((f) => f.startsWith("stream-") && f.endsWith(".sse")).map((f) => framesOf(readFileSync(join(dir, f), "utf8")));
  const synthetic = framesOf(sseOf(splitDeltas(toolText())).join(""));
  return { recorded, synthetic, syntheticTokens: Math.round(toolText().length / 4) };
}

/**
 * CPU ms per run (process.cpuUsage), wall p50/p99 per run, frames per run.
 * @param {(stream: Uint8Array[], tools: ToolDefinition[] | undefined) => Promise<unknown>} run
 * @param {Uint8Array[][]} streams
 * @param {ToolDefinition[] | undefined} tools
 * @param {number} runs
 * @returns {Promise<Timing>}
 */
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
  const pure = async (/** @type {Uint8Array[]} */ s, /** @type {ToolDefinition[] | undefined} */ tools) => runPure(s, tools);
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

/**
 * Per workload, the run with the median CPU time among several `measurePipeline` results.
 * @param {PipelineResult[]} runs
 * @returns {PipelineResult}
 */
export function pipelineMedian(runs) {
  const out = { ...runs[0] };
  for (const [k, v] of Object.entries(runs[0] ?? {})) {
    if (!v || typeof v !== "object" || !("cpuMs" in v)) continue;
    const key = /** @type {keyof PipelineResult} */ (k);
    const sorted = runs.map((r) => /** @type {Timing} */ (r[key])).sort((a, b) => a.cpuMs - b.cpuMs);
    Object.assign(out, { [key]: sorted[Math.floor(sorted.length / 2)] });
  }
  return out;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values: flags } = parseArgs({ options: { runs: { type: "string", default: "300" } } });
  const r = await measurePipeline({ runs: Number(flags.runs) });
  console.log(JSON.stringify(r, null, 2));
}
