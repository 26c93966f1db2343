// Turns bench/run.mjs's results into the "Proxy overhead" section of docs/benchmarks.md (between
// markers, so a re-run replaces the block and leaves the rest of the section and the other sections alone).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { pct } from "./client.mjs";

/**
 * What bench/run.mjs measured: per path (by name), samples in ms (frames/s for the flood).
 * @typedef {Record<string, { json: number[], first: number[] }>} LatencySets
 * @typedef {object} Results
 * @property {{ cpu: string, cores: number, node: string, workerd: string, wrangler: string, loadStart: string, loadEnd: string, date: string }} machine
 * @property {number} rounds
 * @property {number} llamaRounds
 * @property {string[]} paths
 * @property {{ bytes: number, gzipBytes: number }} bundle
 * @property {LatencySets} fast
 * @property {LatencySets} [llama] against the real llama-server (not with --no-llama)
 * @property {Record<string, { delay: number[], gap: number[], spread: number[] }>} paced
 * @property {Record<string, { plain: number[], tools: number[] }>} flood
 * @property {Record<string, Record<string, { errors: number, total: number, latency: number[] }>>} concurrency by level, then path
 * @property {Record<string, number>} [errors] failed requests by path and what
 * @property {import("./pipeline.mjs").PipelineResult} pipeline
 * @property {ReturnType<typeof import("./runtimes.mjs").portkeyVersions>} portkey
 * @property {string} command
 */

const START = "<!-- proxy-overhead:start (written by npm run bench) -->";
const END = "<!-- proxy-overhead:end -->";
const f = (/** @type {number} */ x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : "—");
const sgn = (/** @type {number} */ x, d = 2) => (Number.isFinite(x) ? (x >= 0 ? "+" : "−") + Math.abs(x).toFixed(d) : "—");
const med = (/** @type {number[]} */ xs) => pct(xs, 50);
/** Like f, with a real minus sign for negatives and no plus sign. */
const sgnless = (/** @type {number} */ x, d = 2) => (x < 0 ? "−" : "") + f(Math.abs(x), d);
const kb = (/** @type {number} */ b) => `${(b / 1024).toFixed(1)} KiB`;

/**
 * @typedef {{ what: string, met: boolean, detail: string }} Target
 * @typedef {"json" | "first"} Measure
 */

/** @param {LatencySets} set */
function latencyTable(set) {
  const d = set.direct;
  const rows = ["| path | non-stream p50 | p99 | added p50 | added p99 | first frame p50 | p99 | added p50 | added p99 |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"];
  for (const [name, v] of Object.entries(set)) {
    const j50 = pct(v.json, 50), j99 = pct(v.json, 99), s50 = pct(v.first, 50), s99 = pct(v.first, 99);
    const isD = name === "direct";
    rows.push(`| ${name} | ${f(j50)} | ${f(j99)} | ${isD ? "—" : sgn(j50 - pct(d.json, 50))} | ${isD ? "—" : sgn(j99 - pct(d.json, 99))} | ${f(s50)} | ${f(s99)} | ${isD ? "—" : sgn(s50 - pct(d.first, 50))} | ${isD ? "—" : sgn(s99 - pct(d.first, 99))} |`);
  }
  return rows.join("\n");
}

/**
 * Switchyard's own cost (minus the pass-through in the same runtime) against Portkey's added p50.
 * @param {LatencySets} set
 * @param {string} label
 * @param {Target[]} targets
 */
function ownCost(set, label, targets) {
  const d = set.direct, pk = set["Portkey gateway, Node"];
  const rows = [];
  for (const rt of ["Miniflare", "wrangler dev"]) {
    const sy = set[`Switchyard, ${rt}`], pt = set[`pass-through, ${rt}`];
    if (!sy || !pt || !pk) continue;
    for (const [what, k] of /** @type {Array<[string, Measure]>} */ ([["non-stream", "json"], ["first frame", "first"]])) {
      const own = med(sy[k]) - med(pt[k]);
      const peer = med(pk[k]) - med(d[k]);
      const ratio = own / peer;
      const met = ratio <= 0.2;
      const [lo, hi] = ratioInterval(sy[k], pt[k], pk[k], d[k]);
      const noise = lo <= 0.2 && hi > 0.2 ? "; the interval straddles 0.2, so this run cannot tell" : "";
      targets.push({ what: `own cost ≤ 1/5 of Portkey's added p50, ${what}, ${label}, ${rt}`, met, detail: `${sgn(own)} ms vs ${f(peer)} ms (${f(ratio)}×, 95 % bootstrap interval ${sgnless(lo)}–${sgnless(hi)}×${noise})` });
      // The least any JavaScript proxy pays for the same request in this runtime, over the pass-through.
      const js = set[`pass-through ${k === "json" ? "gathering" : "reading"} in JS, ${rt}`];
      rows.push(`| ${label} | ${rt} | ${what} | ${f(med(pt[k]) - med(d[k]))} | ${js ? sgn(med(js[k]) - med(pt[k])) : "—"} | ${sgn(own)} | ${f(med(sy[k]) - med(d[k]))} | ${f(peer)} | ${f(ratio)} | ${sgnless(lo)}–${sgnless(hi)} | ${met ? "yes" : "no"}${noise ? " (within noise)" : ""} |`);
    }
  }
  return rows;
}

/**
 * 95 % bootstrap interval of `stat`, given a `median(xs)` of a resample of each sample it reads
 * (deterministic resampling from `seed`).
 * @param {number} seed
 * @param {(median: (xs: number[]) => number) => number} stat
 */
function bootstrapInterval(seed, stat, n = 400) {
  const rnd = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 4294967296);
  const median = (/** @type {number[]} */ xs) => pct(Array.from(xs, () => xs[Math.floor(rnd() * xs.length)]), 50);
  const draws = Array.from({ length: n }, () => stat(median));
  return [pct(draws, 2.5), pct(draws, 97.5)];
}

/**
 * The own-cost ratio's interval, (median(sy) − median(pt)) ÷ (median(pk) − median(d)): each draw
 * resamples all four paths. A real llama-server's own jitter moves these medians by tenths of a
 * millisecond from run to run; the interval says how far.
 * @param {number[]} sy
 * @param {number[]} pt
 * @param {number[]} pk
 * @param {number[]} d
 */
const ratioInterval = (sy, pt, pk, d) => bootstrapInterval(4242, (m) => (m(sy) - m(pt)) / (m(pk) - m(d)));

/**
 * The interval of median(a) − median(b).
 * @param {number[]} a
 * @param {number[]} b
 */
const medianDiffInterval = (a, b) => bootstrapInterval(12345, (m) => m(a) - m(b));

/**
 * The report's paragraphs (bench/overhead/report-prose.md): markdown kept in markdown, by `## key`.
 * @type {Record<string, string>}
 */
const PROSE = Object.fromEntries(
  readFileSync(new URL("./report-prose.md", import.meta.url), "utf8")
    .split(/^## /m)
    .slice(1)
    .map((section) => {
      const nl = section.indexOf("\n");
      return [section.slice(0, nl).trim(), section.slice(nl).trim()];
    }),
);

/** @param {Results} r */
export function renderReport(r) {
  /** @type {Target[]} */
  const targets = [];
  const m = r.machine;
  const out = [];
  out.push("## Proxy overhead", "", START, "");
  out.push(`\`${r.command}\` — ${m.date}; ${m.cores} × ${m.cpu}, Node ${m.node}, workerd ${m.workerd} (wrangler ${m.wrangler}), Portkey gateway ${r.portkey.gateway} (hono ${r.portkey.hono}, @hono/node-server ${r.portkey.nodeServer}, @hono/node-ws ${r.portkey.nodeWs}); load average ${m.loadStart} at the start, ${m.loadEnd} at the end (1, 5, 15 min; the cores are shared with other engineers' test runs).`);
  out.push("");
  out.push(PROSE.method);
  out.push("");
  out.push(`### Added latency, fast upstream (a Node server speaking llama-server's protocol, 16 tokens; ${r.rounds} rounds)`, "", latencyTable(r.fast), "");
  if (r.llama) out.push(`### Added latency, real llama-server (tiny test model, max_tokens 4; ${r.llamaRounds} rounds)`, "", latencyTable(r.llama), "");

  const rows = ["| upstream | runtime | request | pass-through added p50 (runtime floor) | JS floor (minus pass-through) | Switchyard own cost p50 (minus pass-through) | Switchyard added p50 | Portkey added p50 | own cost ÷ Portkey | 95 % interval | ≤ 0.2 |", "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"];
  rows.push(...ownCost(r.fast, "fast", targets));
  if (r.llama) rows.push(...ownCost(r.llama, "llama-server", targets));
  out.push("### Switchyard's own cost against the peer", "", rows.join("\n"), "");

  const pd = r.paced.direct;
  const paced = ["| path | frame delay p50 | p99 | added p50 | added p99 | gap p50 | gap p99 | added gap p50 | added gap p99 | spacing change p50 | p1 | p99 |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"];
  for (const [name, v] of Object.entries(r.paced)) {
    const isD = name === "direct";
    paced.push(`| ${name} | ${f(pct(v.delay, 50), 3)} | ${f(pct(v.delay, 99), 3)} | ${isD ? "—" : sgn(pct(v.delay, 50) - pct(pd.delay, 50), 3)} | ${isD ? "—" : sgn(pct(v.delay, 99) - pct(pd.delay, 99), 3)} | ${f(pct(v.gap, 50), 3)} | ${f(pct(v.gap, 99), 3)} | ${isD ? "—" : sgn(pct(v.gap, 50) - pct(pd.gap, 50), 3)} | ${isD ? "—" : sgn(pct(v.gap, 99) - pct(pd.gap, 99), 3)} | ${v.spread ? `${sgn(pct(v.spread, 50), 3)} | ${sgn(pct(v.spread, 1), 3)} | ${sgn(pct(v.spread, 99), 3)}` : "— | — | —"} |`);
  }
  out.push(`### Paced stream (40 frames 5 ms apart; ${r.paced.direct.delay.length} frames per path)`, "", PROSE.paced, "", paced.join("\n"), "");
  for (const rt of ["Miniflare", "wrangler dev"]) {
    const sy = r.paced[`Switchyard, ${rt}`], pt = r.paced[`pass-through, ${rt}`];
    if (!sy || !pt) continue;
    const g50 = pct(sy.gap, 50) - pct(pt.gap, 50);
    const s50 = pct(sy.spread, 50) - pct(pt.spread, 50), s99 = pct(sy.spread, 99) - pct(pt.spread, 99), s1 = pct(sy.spread, 1) - pct(pt.spread, 1);
    const [lo, hi] = medianDiffInterval(sy.spread, pt.spread);
    // A proxy that held frames back and sent them together would move p1 and p99 by about a whole gap
    // (5 ms); half of one is the bound.
    const bunched = s1 < -2.5 || s99 > 2.5;
    targets.push({ what: `added gap between frames not measurable (Switchyard minus pass-through, ${rt}; spacing change)`, met: lo <= 0 && !bunched, detail: `spacing change p50 ${sgn(s50, 3)} ms (95 % bootstrap interval of the difference of medians ${sgn(lo, 3)} … ${sgn(hi, 3)} ms${lo <= 0 ? (hi >= 0 ? ": includes 0" : ": below 0") : ": above 0"}); p1 ${sgn(s1, 3)} ms, p99 ${sgn(s99, 3)} ms (${bunched ? "beyond ±2.5 ms: frames held or bunched" : "within ±2.5 ms, half a gap"}; the spread of per-frame delay, what JavaScript reading costs: see "reading in JS"); frame delay p50 ${sgn(pct(sy.delay, 50) - pct(pt.delay, 50), 3)} ms; unpaired gap p50 ${sgn(g50, 3)} ms` });
  }

  const fd = r.flood.direct;
  const flood = ["| path | frames/s, no tools (median) | ÷ direct | frames/s, with tools (median) | ÷ direct |", "|---|---:|---:|---:|---:|"];
  for (const [name, v] of Object.entries(r.flood)) flood.push(`| ${name} | ${f(med(v.plain), 0)} | ${f(med(v.plain) / med(fd.plain))} | ${f(med(v.tools), 0)} | ${f(med(v.tools) / med(fd.tools))} |`);
  out.push(`### Throughput (1,000 frames as fast as the upstream can write them; ${r.flood.direct.plain.length} rounds)`, "", PROSE.throughput, "", flood.join("\n"), "");

  const levels = Object.keys(r.concurrency);
  const conc = [`| path | ${levels.map((n) => `${n}: errors`).join(" | ")} | ${levels.map((n) => `${n}: p99 / added p99`).join(" | ")} |`, `|---|${levels.map(() => "---:").join("|")}|${levels.map(() => "---:").join("|")}|`];
  for (const name of Object.keys(r.concurrency[levels[0]])) {
    const errs = levels.map((n) => { const c = r.concurrency[n][name]; return `${c.errors}/${c.total}`; });
    const lat = levels.map((n) => { const c = r.concurrency[n][name], d = r.concurrency[n].direct; const p = pct(c.latency, 99); return name === "direct" ? f(p, 1) : `${f(p, 1)} / ${sgn(p - pct(d.latency, 99), 1)}`; });
    conc.push(`| ${name} | ${errs.join(" | ")} | ${lat.join(" | ")} |`);
  }
  out.push("### Concurrent streams (all started at once; the fast upstream's 16-token stream)", "", PROSE.concurrency, "", conc.join("\n"), "");

  const p = r.pipeline;
  const scale = 1000 / p.syntheticTokens;
  const pipe = ["| workload | frames | CPU ms per request | ns per frame | wall p50 | wall p99 |", "|---|---:|---:|---:|---:|---:|"];
  const pr = (/** @type {string} */ name, /** @type {import("./pipeline.mjs").Timing} */ x, per = 1) => pipe.push(`| ${name} | ${x.frames} | ${f(x.cpuMs / per, 3)} | ${f(x.nsPerFrame, 0)} | ${f(x.p50 / per, 3)} | ${f(x.p99 / per, 3)} |`);
  if (p.pureTools) {
    pr(`pure pipeline, 1,000-token answer, no tools (no streams between the stages)`, { ...p.purePlain, cpuMs: p.purePlain.cpuMs * scale, p50: p.purePlain.p50 * scale, p99: p.purePlain.p99 * scale });
    pr(`pure pipeline, 1,000-token answer with tools`, { ...p.pureTools, cpuMs: p.pureTools.cpuMs * scale, p50: p.pureTools.p50 * scale, p99: p.pureTools.p99 * scale });
  }
  pr(`${p.recordedCount} recorded llama-server streams (test/fixtures/llama), no tools — per set`, p.recordedPlain);
  pr(`the same with tools (get_weather) — per set`, p.recordedTools);
  pr(`as streamed in the Worker: 1,000-token answer (${p.syntheticTokens} tokens scaled to 1,000), no tools`, { ...p.syntheticPlain, cpuMs: p.syntheticPlain.cpuMs * scale, p50: p.syntheticPlain.p50 * scale, p99: p.syntheticPlain.p99 * scale });
  pr(`as streamed in the Worker: 1,000-token answer with tools (rewriting two calls)`, { ...p.syntheticTools, cpuMs: p.syntheticTools.cpuMs * scale, p50: p.syntheticTools.p50 * scale, p99: p.syntheticTools.p99 * scale });
  const cpu1k = (p.pureTools ?? p.syntheticTools).cpuMs * scale;
  const streamed = p.syntheticTools.cpuMs * scale;
  targets.push({ what: "≤ 2 ms CPU for a 1,000-token stream with tools (pure pipeline)", met: cpu1k <= 2, detail: `${f(cpu1k, 3)} ms pure; ${f(streamed, 3)} ms with the Worker's web streams between the stages, in Node` });
  out.push("### CPU per request of the pipeline (Node)", "", PROSE.pipeline, "", pipe.join("\n"), "");

  const gz = r.bundle.gzipBytes;
  targets.push({ what: "bundle ≤ 100 KB gzipped", met: gz <= 100 * 1024, detail: `${kb(gz)} gzipped (${kb(r.bundle.bytes)} minified)` });
  out.push("### Worker bundle", "", `\`wrangler deploy --dry-run --outdir …\` (minify = true): ${kb(r.bundle.bytes)}, ${kb(gz)} gzipped (gzip -9).`, "");

  const errs = Object.entries(r.errors ?? {});
  if (errs.length) out.push(`Errors during the sequential parts: ${errs.map(([k, v]) => `${k}: ${v}`).join("; ")}.`, "");
  out.push("### Targets", "", ...targets.map((t) => `- ${t.met ? "**met**" : "**not met**"}: ${t.what} — ${t.detail}`), "", END);
  return out.join("\n");
}

/**
 * The report's Markdown (with its "## Proxy overhead" heading), also written into `file` (docs/benchmarks.md)
 * between its markers when given: the block from the start marker on replaces the one there.
 * @param {Results} r
 * @param {string | null} file
 */
export function writeReport(r, file) {
  const md = renderReport(r);
  if (!file) return md;
  let doc = existsSync(file) ? readFileSync(file, "utf8") : "# Benchmarks\n";
  // Only the block between the markers is the run's: the section's heading, its introduction and its
  // caveats around the block are written by hand. Without the markers, the section goes at the end.
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a >= 0 && b > a) doc = doc.slice(0, a) + md.slice(md.indexOf(START)) + doc.slice(b + END.length);
  else if (a >= 0 || b >= 0) throw new Error(`${file} has only one of the proxy-overhead markers`);
  else doc = doc.trimEnd() + "\n\n" + md + "\n";
  writeFileSync(file, doc);
  return md;
}
