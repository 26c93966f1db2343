#!/usr/bin/env node
// Two CPU profiles of the Worker (profile-worker.mjs --out) compared: the isolate's busy time per
// request in each, and the functions whose self time per request differs most (B − A). Only sums
// over several functions hold: the JIT inlines differently from one process to the next, moving
// some microseconds between a function and its callers.
//   npx node bench/overhead/profile-diff.mjs A.cpuprofile B.cpuprofile --requests 4000 [--top 40]
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values: flags, positionals } = parseArgs({ allowPositionals: true, options: { requests: { type: "string" }, top: { type: "string", default: "40" } } });
const [fileA, fileB] = positionals;
const N = Number(flags.requests);
if (!fileA || !fileB || !(N > 0)) {
  console.error("usage: npx node bench/overhead/profile-diff.mjs A.cpuprofile B.cpuprofile --requests N [--top 40]");
  process.exit(2);
}

/**
 * Self time (µs) per function ("name file:line"), idle left out.
 * @param {string} file
 */
function selfTimes(file) {
  /** @type {{ nodes: Array<{ id: number, callFrame: { functionName: string, url: string, lineNumber: number } }>, samples: number[], timeDeltas: number[] }} */
  const p = JSON.parse(readFileSync(file, "utf8"));
  const byId = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
  /** @type {Map<string, number>} */
  const self = new Map();
  p.samples.forEach((id, i) => {
    const cf = byId.get(id);
    if (!cf || cf.functionName === "(idle)") return;
    const key = `${cf.functionName || "(anonymous)"} ${cf.url ? cf.url.split("/").pop() : ""}:${cf.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  return self;
}

const [a, b] = [selfTimes(fileA), selfTimes(fileB)];
const total = (/** @type {Map<string, number>} */ m) => [...m.values()].reduce((s, v) => s + v, 0) / N;
console.log(`busy per request: A ${total(a).toFixed(1)} µs, B ${total(b).toFixed(1)} µs, B − A ${(total(b) - total(a)).toFixed(1)} µs`);
const rows = [...new Set([...a.keys(), ...b.keys()])].map((k) => ({ k, d: ((b.get(k) ?? 0) - (a.get(k) ?? 0)) / N, b: (b.get(k) ?? 0) / N }));
rows.sort((x, y) => Math.abs(y.d) - Math.abs(x.d));
for (const r of rows.slice(0, Number(flags.top))) console.log(`${`${r.d >= 0 ? "+" : ""}${r.d.toFixed(2)}`.padStart(8)} µs  (B ${r.b.toFixed(2)})  ${r.k}`);
