// The Worker's source bundled once for the workerd tests, so each test file imports a few modules
// instead of fetching the ~370 files of src/ one by one through vite's module runner.
import { buildSync } from "esbuild";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { Plugin } from "vitest/config";

// Why: the Worker test files in a workerd of their own (vitest.config.ts's OWN_WORKERD), and each of
// the two vitest processes' shared one, import src/ through vite's module runner, which cost ~3 s a file here (4 files: 11.9 s of import from the sources, 4.4 s from a bundle).
// esbuild's code splitting keeps one instance of every module across the entries, so a test that
// imports src/health/health-client.ts to reset it resets the very module the Worker (main) runs.
// SWITCHYARD_TEST_SOURCES=1 runs the tests against src/ itself (watch mode, stack traces with the
// sources' lines).

const RELATIVE_IMPORT = /(?:from\s+|import\s*\(\s*)["'](\.\.?\/[^"']+\.(?:ts|mjs|js))["']/g;

/**
 * Every src/ module the test files in the given folders import, directly or through the test
 * helpers they import (test/unit's shared fixtures included): the bundle's entries besides main.
 */
function srcImportsOf(root: string, folders: string[]): string[] {
  const src = join(root, "src") + "/";
  const found = new Set<string>();
  const seen = new Set<string>();
  const queue = folders.flatMap((folder) =>
    readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".ts"))
      .map((name) => join(root, folder, name)),
  );
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(RELATIVE_IMPORT)) {
      const target = resolve(dirname(file), m[1] ?? "");
      if (target.startsWith(src)) found.add(target);
      else if (!target.includes("/node_modules/")) queue.push(target);
    }
  }
  return [...found];
}

/**
 * A vite plugin for the Worker project: builds src/ (main and every module the tests import) into one
 * split bundle, and points every import of a src/ file at its entry there. Returns the main entry's
 * path for the pool's `main`, or undefined when the tests run against the sources.
 */
export function workerBundle(root: string, testFolders: string[]): { plugin: Plugin; main: string | undefined } {
  if (process.env.SWITCHYARD_TEST_SOURCES === "1") return { plugin: { name: "switchyard-worker-bundle" }, main: undefined };
  const src = join(root, "src");
  // Inside the project, so the bundle's imports of dependencies resolve to node_modules/.
  const cache = join(root, "node_modules", ".cache");
  mkdirSync(cache, { recursive: true });
  const out = mkdtempSync(join(cache, "switchyard-worker-tests-"));
  process.once("exit", () => rmSync(out, { recursive: true, force: true }));
  const entries = [join(src, "index.ts"), ...srcImportsOf(root, testFolders)];
  buildSync({
    entryPoints: entries,
    outdir: out,
    outbase: src,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "neutral",
    target: "es2024",
    // The dependencies in the bundle too: left as imports, those vite's optimizer does not pre-bundle
    // are fetched file by file again.
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    sourcemap: "linked",
    logLevel: "warning",
  });
  const entryOf = (file: string) => join(out, relative(src, file).replace(/\.ts$/, ".js"));
  const known = new Set(entries);
  const plugin: Plugin = {
    name: "switchyard-worker-bundle",
    enforce: "pre",
    resolveId(source, importer) {
      if (!importer || importer.startsWith(out) || !source.startsWith(".")) return null;
      const file = resolve(dirname(importer.split("?")[0] ?? importer), source);
      if (!file.startsWith(src + "/")) return null;
      if (!known.has(file))
        throw new Error(`${relative(root, importer)} imports ${relative(root, file)}, which the Worker tests' bundle was not built with (test/support/worker-bundle.ts follows imports written as a plain "from" or "import(")`);
      return entryOf(file);
    },
  };
  return { plugin, main: entryOf(join(src, "index.ts")) };
}
