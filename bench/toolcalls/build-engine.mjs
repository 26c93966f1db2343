// Bundles src/toolcalls/index.ts for Node with the esbuild that wrangler already installs, so the
// benchmark runs the same code the Worker does without a TypeScript loader.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export async function loadEngine(repoRoot) {
  const { build } = await import(pathToFileURL(join(repoRoot, "node_modules/esbuild/lib/main.js")).href);
  const outfile = join(mkdtempSync(join(tmpdir(), "switchyard-toolcalls-")), "engine.mjs");
  await build({
    entryPoints: [join(repoRoot, "src/toolcalls/index.ts")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    outfile,
    logLevel: "warning",
  });
  return import(pathToFileURL(outfile).href);
}
