#!/usr/bin/env node
// Builds the serving page's scripts from worker/ into public/ (plain ES modules, one small bundle each:
// the page shares src/schemas/relay.ts and zod/mini with the Worker), and copies web-llm's
// self-contained lib/index.js to public/vendor/web-llm/index.js. web-llm is loaded by URL at run time,
// never bundled. Generated files are gitignored. Runs from postinstall, pretest and `npm start`.
import { build } from "esbuild";
import { copyFileSync, existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const from = join(root, "node_modules/@mlc-ai/web-llm/lib/index.js");
const to = join(root, "public/vendor/web-llm/index.js");
if (!existsSync(from)) {
  console.error("[build] @mlc-ai/web-llm is not installed: run npm install");
  process.exit(1);
}
if (!existsSync(to) || statSync(to).size !== statSync(from).size) {
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
}

await build({
  entryPoints: { app: join(root, "worker/app.js"), "llm-worker": join(root, "worker/llm-worker.js"), status: join(root, "worker/status.ts") },
  outdir: join(root, "public"),
  bundle: true,
  format: "esm",
  target: "es2022",
  platform: "browser",
  external: ["/vendor/*"],
  minify: false,
  logLevel: "warning",
});
