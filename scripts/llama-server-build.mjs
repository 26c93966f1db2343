#!/usr/bin/env node
// Builds llama.cpp's `llama-server` from the source that ships inside node-llama-cpp's npm tarball,
// into a cache outside the repository keyed by version, so the slow build (≈10 min on 2 cores) runs
// once per machine. Prints progress; exits non-zero with the apt command when a system tool is missing.
//
//   node scripts/llama-server-build.mjs          build if needed, print the binary's path last
//   LLAMA_SERVER_BIN=/path/llama-server …        use that binary, build nothing
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, cpSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { llamaCache, NODE_LLAMA_CPP_VERSION } from "./llama-cache.mjs";
import { configureLlama, fetchLlamaSource } from "./llama-source.mjs";

const log = (/** @type {string} */ msg) => process.stderr.write(`[llama-server] ${msg}\n`);

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {import("node:child_process").SpawnSyncOptions} [opts]
 */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"], ...opts });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} failed with ${r.status ?? r.signal}`);
  }
}

/** @param {string} cmd */
function has(cmd) {
  return spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
}

export function requireTools() {
  const missing = ["cmake", "git", "c++", "make", "tar"].filter((t) => !has(t));
  if (missing.length) {
    log(`missing system tools: ${missing.join(", ")}`);
    log(`fix: apt-get update && apt-get install -y cmake g++ make git tar`);
    process.exit(2);
  }
}

export function buildLlamaServer() {
  if (process.env.LLAMA_SERVER_BIN) {
    if (!existsSync(process.env.LLAMA_SERVER_BIN)) {
      log(`LLAMA_SERVER_BIN=${process.env.LLAMA_SERVER_BIN} does not exist`);
      process.exit(2);
    }
    return process.env.LLAMA_SERVER_BIN;
  }
  const cache = llamaCache();
  if (existsSync(cache.bin) && existsSync(cache.vocab)) {
    log(`cached: ${cache.bin}`);
    return cache.bin;
  }
  requireTools();
  mkdirSync(cache.root, { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "switchyard-llama-"));
  const started = Date.now();
  const elapsed = () => `${Math.round((Date.now() - started) / 1000)}s`;
  try {
    const { src, commit } = fetchLlamaSource(work, (m) => log(`${m} (${elapsed()})`));
    log(`configuring with cmake… (${elapsed()})`);
    configureLlama(src);
    log(`compiling llama-server on ${process.env.LLAMA_BUILD_JOBS ?? 2} jobs (≈8–12 min on 2 cores, once)… (${elapsed()})`);
    run("cmake", ["--build", join(src, "build"), "--target", "llama-server", "-j", String(process.env.LLAMA_BUILD_JOBS ?? 2)]);
    // Stage everything, then rename into place, so an interrupted build never leaves a half cache.
    const stage = `${cache.root}.partial`;
    rmSync(stage, { recursive: true, force: true });
    mkdirSync(join(stage, "bin"), { recursive: true });
    cpSync(join(src, "build/bin/llama-server"), join(stage, "bin/llama-server"));
    cpSync(join(src, "models"), join(stage, "models"), {
      recursive: true,
      filter: (p) => !/\.gguf\.(inp|out)$/.test(p),
    });
    writeFileSync(join(stage, "VERSION"), `node-llama-cpp ${NODE_LLAMA_CPP_VERSION}\nllama.cpp ${commit}\n`);
    rmSync(cache.root, { recursive: true, force: true });
    renameSync(stage, cache.root);
    log(`built in ${elapsed()}: ${cache.bin}`);
    return cache.bin;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(buildLlamaServer() + "\n");
}
