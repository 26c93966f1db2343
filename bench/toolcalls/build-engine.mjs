// Bundles src/toolcalls/index.ts for Node with the esbuild that wrangler already installs, so the
// benchmark runs the same code the Worker does without a TypeScript loader.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** Bundles `entry` (a TypeScript module of the repository) for Node and imports it. */
export async function loadBundle(repoRoot, entry) {
  const { build } = await import(pathToFileURL(join(repoRoot, "node_modules/esbuild/lib/main.js")).href);
  const outfile = join(mkdtempSync(join(tmpdir(), "switchyard-toolcalls-")), "bundle.mjs");
  await build({
    entryPoints: [join(repoRoot, entry)],
    bundle: true,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    outfile,
    logLevel: "warning",
  });
  return import(pathToFileURL(outfile).href);
}

export const loadEngine = (repoRoot) => loadBundle(repoRoot, "src/toolcalls/index.ts");
