#!/usr/bin/env node
// Builds the serving page's scripts from worker/ into public/ (plain ES modules, one small bundle each:
// the page shares src/schemas/relay.ts and zod/mini with the Worker), and copies the two engines'
// files: web-llm's self-contained lib/index.js to public/vendor/web-llm/index.js, and wllama's
// esm/index.js and wasm/wllama.wasm (llama.cpp in WebAssembly, 8.8 MB) to public/vendor/wllama/. Both
// are loaded by URL at run time, only when their engine is chosen, never bundled (nor in the Worker).
// Generated files are gitignored. Runs from postinstall, pretest and `npm start`.
//
// A file is written only when its bytes changed: `wrangler dev` watches public/ and reloads on any
// write, which closes every browser session of that server (1006) and loses its hub state, so a second
// `npm start` of the same checkout must leave the first one's files alone.
//
// `--out <dir>` builds into another directory (tests).
import { build } from "esbuild";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: flags } = parseArgs({ options: { out: { type: "string" } } });
const out = flags.out ? resolve(flags.out) : join(root, "public");
const from = join(root, "node_modules/@mlc-ai/web-llm/lib/index.js");
if (!existsSync(from)) {
  console.error("[build] @mlc-ai/web-llm is not installed: run npm install");
  process.exit(1);
}

/**
 * Writes `bytes` to `path` unless the file already holds exactly them. Returns whether it wrote.
 * @param {string} path
 * @param {Uint8Array} bytes
 */
function writeIfChanged(path, bytes) {
  if (existsSync(path) && Buffer.compare(readFileSync(path), bytes) === 0) return false;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  return true;
}

writeIfChanged(join(out, "vendor/web-llm/index.js"), readFileSync(from));
// wllama: the page then offers GGUF models. Without it (an install from before it was a dependency)
// the page says the llama.cpp engine is missing when one is chosen.
const wllama = join(root, "node_modules/@wllama/wllama/esm");
if (existsSync(join(wllama, "index.js"))) {
  writeIfChanged(join(out, "vendor/wllama/index.js"), readFileSync(join(wllama, "index.js")));
  writeIfChanged(join(out, "vendor/wllama/wllama.wasm"), readFileSync(join(wllama, "wasm/wllama.wasm")));
} else console.error("[build] @wllama/wllama is not installed: the page cannot run GGUF models until npm install");

const result = await build({
  entryPoints: { app: join(root, "worker/app.js"), "web-llm-thread": join(root, "worker/web-llm-thread.js"), status: join(root, "worker/status.ts") },
  outdir: out,
  bundle: true,
  format: "esm",
  target: "es2022",
  platform: "browser",
  external: ["/vendor/*"],
  // The engines are imported when one is chosen; bundled in, as one file (no chunks to serve).
  minify: false,
  logLevel: "warning",
  write: false,
});
for (const file of result.outputFiles) writeIfChanged(file.path, file.contents);
