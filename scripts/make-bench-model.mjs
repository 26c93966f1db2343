#!/usr/bin/env node
// Writes a bigger random-weight model than the test model (scripts/gguf-writer.mjs, same vocabulary
// and template) for benches where prefill must cost what it costs: cached beside the test model,
// keyed by its hyperparameters, written only when missing. Prints its path.
//
//   node scripts/make-bench-model.mjs [--embd 384] [--layers 6] [--ff 1024] [--heads 6] [--kv-heads 2]
//   → <cache root>/models-switchyard/bench-qwen2-e384-l6-f1024-h6-kv2-v<N>.gguf
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { llamaCache } from "./llama-cache.mjs";
import { GGUF_WRITER_VERSION } from "./gguf-writer.mjs";
import { writeModelFile } from "./make-test-model.mjs";

/**
 * The shape of a bench model (the rest of the hyperparameters are the tiny model's).
 * @typedef {{ n_embd: number, n_layer: number, n_ff: number, n_head: number, n_head_kv: number }} BenchShape
 */

/** The shape bench/agent-pool.mjs uses (docs/benchmarks.md says how it was chosen). */
export const BENCH_SHAPE = Object.freeze({ n_embd: 384, n_layer: 6, n_ff: 1024, n_head: 6, n_head_kv: 2 });

/** @param {BenchShape} s */
export function benchModelPath(s, cache = llamaCache()) {
  const key = `e${s.n_embd}-l${s.n_layer}-f${s.n_ff}-h${s.n_head}-kv${s.n_head_kv}`;
  return join(cache.root, "models-switchyard", `bench-qwen2-${key}-v${GGUF_WRITER_VERSION}.gguf`);
}

/**
 * Returns the bench model's path, writing it first if missing (a few seconds, tens of MB).
 * @param {BenchShape} [shape]
 * @param {{ log?: (msg: string) => void }} [opts]
 */
export function makeBenchModel(shape = BENCH_SHAPE, { log = () => {} } = {}) {
  const cache = llamaCache();
  const out = benchModelPath(shape, cache);
  if (existsSync(out)) return out;
  if (!existsSync(cache.vocab)) throw new Error(`${cache.vocab} is missing: build llama-server first (node scripts/pretest.mjs)`);
  return writeModelFile(out, { name: `switchyard-bench-qwen2-v${GGUF_WRITER_VERSION}`, hparams: { ...shape, context_length: 32768 }, log }, cache);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      embd: { type: "string" },
      layers: { type: "string" },
      ff: { type: "string" },
      heads: { type: "string" },
      "kv-heads": { type: "string" },
    },
  });
  const num = (/** @type {string | undefined} */ v, /** @type {number} */ d) => (v === undefined ? d : Number(v));
  const shape = {
    n_embd: num(values.embd, BENCH_SHAPE.n_embd),
    n_layer: num(values.layers, BENCH_SHAPE.n_layer),
    n_ff: num(values.ff, BENCH_SHAPE.n_ff),
    n_head: num(values.heads, BENCH_SHAPE.n_head),
    n_head_kv: num(values["kv-heads"], BENCH_SHAPE.n_head_kv),
  };
  process.stdout.write(makeBenchModel(shape, { log: (m) => process.stderr.write(`[bench-model] ${m}\n`) }) + "\n");
}
