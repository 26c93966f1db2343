#!/usr/bin/env node
// Writes the tiny random-weight test model (scripts/gguf-writer.mjs) into the llama-server cache,
// next to the vocab GGUFs it is made from, only if it is missing. Prints its path.
//
//   node scripts/make-test-model.mjs            → <cache root>/models-switchyard/tiny-qwen2-v<N>.gguf
//   SWITCHYARD_TEST_MODEL=/path/model.gguf …     use that file instead, write nothing
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { llamaCache } from "./llama-cache.mjs";
import { GGUF_WRITER_VERSION, writeTinyLlamaModel } from "./gguf-writer.mjs";

export const TEST_MODEL_SEED = 20240607;
/**
 * The test model's vocabulary: Qwen2's first 4,096 ordinary tokens and its special ones
 * (gguf-vocab.mjs cutVocabulary). A literal grammar then costs llama-server ~17× less CPU than over
 * all 151,936 (bench/test-model.mjs), and the model is 1.3 MB instead of 45; text takes ~1.6–2× as
 * many tokens.
 */
export const TEST_MODEL_VOCAB = 4096;
/** Qwen2.5's template renders `tools`, so `/props` reports `chat_template_caps.supports_tool_calls: true`. */
export const TEST_MODEL_TEMPLATE = "Qwen-Qwen2.5-7B-Instruct.jinja";

/** Where the test model lives (whether or not it exists yet). */
export function testModelPath(cache = llamaCache()) {
  if (process.env.SWITCHYARD_TEST_MODEL) return process.env.SWITCHYARD_TEST_MODEL;
  return join(cache.root, "models-switchyard", `tiny-qwen2-v${GGUF_WRITER_VERSION}.gguf`);
}

/**
 * Returns the test model's path, writing it first if missing (≈0.2 s, ≈1.3 MB).
 * Needs the vocab GGUF and templates that `buildLlamaServer()` copies into the cache.
 * @param {{ log?: (msg: string) => void }} [opts]
 */
export function makeTestModel({ log = () => {} } = {}) {
  const cache = llamaCache();
  const out = testModelPath(cache);
  if (existsSync(out)) return out;
  if (process.env.SWITCHYARD_TEST_MODEL) throw new Error(`SWITCHYARD_TEST_MODEL=${out} does not exist`);
  if (!existsSync(cache.vocab)) {
    throw new Error(`${cache.vocab} is missing: build llama-server first (node scripts/llama-server-build.mjs, or npm test whose pretest does it)`);
  }
  return writeModelFile(out, { name: `switchyard-tiny-qwen2-v${GGUF_WRITER_VERSION}`, vocabSize: TEST_MODEL_VOCAB, log }, cache);
}

/**
 * Writes a random-weight model of the test model's vocabulary, template and seed to `out` (and its
 * description beside it, `<out>.json`); `hparams` override the tiny model's (make-bench-model.mjs);
 * `vocabSize` cuts the vocabulary (the whole of it without).
 * @param {string} out
 * @param {{ name: string, hparams?: Record<string, number>, vocabSize?: number, log: (msg: string) => void }} opts
 */
export function writeModelFile(out, { name, hparams, vocabSize, log }, cache = llamaCache()) {
  mkdirSync(join(cache.root, "models-switchyard"), { recursive: true });
  const started = Date.now();
  const info = writeTinyLlamaModel({
    vocabPath: cache.vocab,
    templatePath: join(cache.templates, TEST_MODEL_TEMPLATE),
    outPath: out,
    seed: TEST_MODEL_SEED,
    name,
    ...(hparams ? { hparams } : {}),
    ...(vocabSize ? { vocabSize } : {}),
  });
  writeFileSync(`${out}.json`, JSON.stringify({ ...info, writer_version: GGUF_WRITER_VERSION, template: TEST_MODEL_TEMPLATE }, null, 2) + "\n");
  log(`wrote ${out} (${(info.bytes / 1e6).toFixed(1)} MB, ${Date.now() - started} ms)`);
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.stdout.write(makeTestModel({ log: (m) => process.stderr.write(`[test-model] ${m}\n`) }) + "\n");
  } catch (e) {
    process.stderr.write(`[test-model] ${e instanceof Error ? e.message : e}\n`);
    process.exit(1);
  }
}
