// Bundles src/toolcalls/index.ts for Node with the esbuild that wrangler already installs, so the
// benchmark runs the same code the Worker does without a TypeScript loader.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/** @typedef {typeof import("../../src/toolcalls/index.ts")} Engine */

/**
 * Bundles `entry` (a TypeScript module of the repository) for Node and imports it.
 * @param {string} repoRoot
 * @param {string} entry
 * @returns {Promise<unknown>} the module's namespace: the caller knows which module it asked for
 */
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

/** @param {string} repoRoot */
export const loadEngine = async (repoRoot) => /** @type {Engine} */ (await loadBundle(repoRoot, "src/toolcalls/index.ts"));
