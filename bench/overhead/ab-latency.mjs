#!/usr/bin/env node
// Added latency of two builds of the Worker in one isolate: A (a git revision) and B (the working
// tree, or --b <rev>) are bundled together behind one entry that picks the app per request by the
// x-ab header, and run under one Miniflare against the fast upstream (bench/overhead/upstream.mjs).
// Every round sends one request straight to the upstream, one to A and one to B, in an order that
// cycles through all six permutations (a fixed order biases whichever path follows the direct one).
// Reports each build's added p50 and the median of the per-round differences B − A.
// For A/B checks of a change worth a few hundredths of a millisecond, which the side-by-side
// benchmark (separate processes, npm run bench) cannot resolve. Two identical builds (`--a HEAD`
// with a clean tree) differ by about ±0.02 ms: that is the resolution.
//   npx node bench/overhead/ab-latency.mjs [--a HEAD] [--b <rev>] [--stream] [--rounds 1000]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { pct, post } from "./client.mjs";
import { bundleEntry, checkoutRevision, miniflareSwitchyard } from "./runtimes.mjs";
import { startBenchUpstream } from "./upstream.mjs";

const ROOT = resolve(import.meta.dirname, "../..");
const { values: flags } = parseArgs({
  options: { a: { type: "string", default: "HEAD" }, b: { type: "string" }, stream: { type: "boolean", default: false }, rounds: { type: "string", default: "1000" } },
});
const { stream } = flags;
const ROUNDS = Number(flags.rounds);
const A = flags.a;
const B = flags.b;

/** @type {Array<() => void>} */
const cleanups = [];
const srcOf = (/** @type {string | undefined} */ rev) => {
  if (!rev) return join(ROOT, "src");
  const c = checkoutRevision(rev);
  cleanups.push(c.cleanup);
  return join(c.dir, "src");
};

const [srcA, srcB] = [srcOf(A), srcOf(B)];
mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
const dir = mkdtempSync(join(ROOT, ".wrangler", "ab-latency-"));
cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
// The Durable Object classes come from B; both apps reach them through the same bindings.
writeFileSync(
  join(dir, "entry.ts"),
  `import appA from ${JSON.stringify(join(srcA, "index.ts"))};
import appB from ${JSON.stringify(join(srcB, "index.ts"))};
export * from ${JSON.stringify(join(srcB, "index.ts"))};
export default { fetch: (req: Request, env: unknown, ctx: ExecutionContext) => (req.headers.get("x-ab") === "a" ? appA : appB).fetch(req, env, ctx) };
`,
);
const bundle = await bundleEntry(join(dir, "entry.ts"));
cleanups.push(bundle.cleanup);

const up = await startBenchUpstream();
const UP = `http://127.0.0.1:${up.port}`;
const mf = await miniflareSwitchyard(bundle.script, { SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { fast: { targets: [{ kind: "llama", url: `${UP}/fast` }] } } }) });
try {
  const base = mf.url;
  const body = { model: "fast", stream, messages: [{ role: "user", content: "hi" }] };
  const urls = { direct: `${UP}/fast/v1/chat/completions`, a: `${base}/v1/chat/completions`, b: `${base}/v1/chat/completions` };
  /** @type {Array<Array<keyof typeof urls>>} */
  const ORDERS = [["direct", "a", "b"], ["a", "b", "direct"], ["b", "direct", "a"], ["b", "a", "direct"], ["a", "direct", "b"], ["direct", "b", "a"]];
  /** @type {Record<keyof typeof urls, number[]>} */
  const lat = { direct: [], a: [], b: [] };
  for (let round = -60; round < ROUNDS; round++) {
    for (const k of ORDERS[(round + 60) % 6]) {
      const r = await post(urls[k], body, { headers: k === "direct" ? {} : { "x-ab": k } });
      if (!r.done) throw new Error(`${k}: ${r.status} ${r.text}`);
      if (round >= 0) lat[k].push((stream ? r.token || r.first : r.end) - r.t0);
    }
  }
  const d = pct(lat.direct, 50);
  const diffs = lat.b.map((x, i) => x - lat.a[i]);
  console.log(`${stream ? "first frame" : "non-stream"}, ${ROUNDS} rounds, one Miniflare, added latency p50:`);
  console.log(`  A (${A}): ${(pct(lat.a, 50) - d).toFixed(3)} ms   B (${B ?? "working tree"}): ${(pct(lat.b, 50) - d).toFixed(3)} ms   B − A: ${(pct(lat.b, 50) - pct(lat.a, 50)).toFixed(3)} ms (per-round differences: median ${pct(diffs, 50).toFixed(3)}, quartiles ${pct(diffs, 25).toFixed(3)} … ${pct(diffs, 75).toFixed(3)})`);
} finally {
  await mf.stop();
  await up.close();
  for (const c of cleanups) c();
}
