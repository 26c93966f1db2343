#!/usr/bin/env node
// The AdmissionHub's own ceiling in workerd: one instance driven by a Worker in the same workerd
// (wrangler's unstable_startWorker, bench/multi-door/hub-worker.ts), ask + end pairs (the two calls
// one request makes when a slot is free), at concurrency 1 (the added latency of coordination per
// request, the object in the same location) and at higher concurrency (the pairs per second one
// object sustains before it is the bottleneck). Used by bench/multi-door.mjs; alone:
//   node bench/multi-door/hub-ceiling.mjs [--n 4000] [--concurrency 1,16,64]
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { unstable_startWorker } from "wrangler";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * @param {{ n?: number, concurrency?: number[] }} [o]
 * @returns {Promise<Array<{ n: number, c: number, ms: number, pairsPerSecond: number, p50: number, p99: number }>>}
 */
export async function hubCeiling({ n = 4000, concurrency = [1, 16, 64] } = {}) {
  const dir = join(ROOT, ".wrangler", "bench-hub");
  mkdirSync(dir, { recursive: true });
  const config = join(dir, "wrangler.json");
  writeFileSync(
    config,
    JSON.stringify({
      name: "admission-hub-bench",
      main: join(ROOT, "bench/multi-door/hub-worker.ts"),
      compatibility_date: "2026-10-01",
      durable_objects: { bindings: [{ name: "ADMISSION_HUB", class_name: "AdmissionHub" }] },
      migrations: [{ tag: "v1", new_sqlite_classes: ["AdmissionHub"] }],
    }),
  );
  const worker = await unstable_startWorker({ config, dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: false, watch: false, logLevel: "warn" } });
  try {
    await worker.ready;
    const base = (await worker.url).origin;
    const out = [];
    // A warm-up: the object's first call, the bundle's first run.
    await (await fetch(`${base}/?n=200&c=4&name=warm`)).json();
    for (const c of concurrency) {
      // `c` pairs in flight: up to 8 per fetch, as many fetches at once as that takes, 400 pairs each.
      const fetches = Math.max(1, Math.ceil(c / 8));
      const per = Math.ceil(c / fetches);
      const rounds = Math.max(1, Math.round(n / (400 * fetches)));
      /** @type {number[]} */
      const lat = [];
      let pairs = 0;
      const t0 = performance.now();
      for (let r = 0; r < rounds; r++) {
        const replies = await Promise.all(
          Array.from({ length: fetches }, async (_, f) => {
            const res = await fetch(`${base}/?n=400&c=${per}&name=c${c}`);
            if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
            return /** @type {{ n: number, lat: number[] }} */ (await res.json());
          }),
        );
        for (const x of replies) {
          pairs += x.n;
          lat.push(...x.lat);
        }
      }
      const ms = performance.now() - t0;
      lat.sort((a, b) => a - b);
      const q = (/** @type {number} */ p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? NaN;
      out.push({ n: pairs, c, ms, pairsPerSecond: (pairs / ms) * 1000, p50: q(0.5), p99: q(0.99) });
    }
    return out;
  } finally {
    await worker.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { n: { type: "string", default: "4000" }, concurrency: { type: "string", default: "1,16,64" } } });
  const rows = await hubCeiling({ n: Number(values.n), concurrency: values.concurrency.split(",").map(Number) });
  for (const r of rows) console.log(`c=${r.c}: ${Math.round(r.pairsPerSecond)} ask+end pairs/s, pair p50 ${r.p50.toFixed(2)} ms p99 ${r.p99.toFixed(2)} ms (${r.n} in ${Math.round(r.ms)} ms)`);
}
