// The page build (worker/build.mjs) writes a file only when its bytes changed: `wrangler dev` reloads
// on any write under public/ and drops its browser sessions, so a second `npm start` of the same
// checkout must not touch the files the first one serves.
import { it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const FILES = ["app.js", "web-llm-thread.js", "status.js", "vendor/web-llm/index.js", "vendor/wllama/index.js", "vendor/wllama/wllama.wasm"];
const buildInto = (/** @type {string} */ dir) => execFileSync(process.execPath, ["worker/build.mjs", "--out", dir], { stdio: "pipe" });

it("a second build leaves every output file untouched; a changed one is rewritten", () => {
  const dir = mkdtempSync(join(tmpdir(), "page-build-"));
  try {
    buildInto(dir);
    // Back-date the files, so a rewrite would show even within the file system's mtime resolution.
    const old = new Date(Date.now() - 3600_000);
    for (const f of FILES) utimesSync(join(dir, f), old, old);
    const before = Object.fromEntries(FILES.map((f) => [f, statSync(join(dir, f)).mtimeMs]));
    buildInto(dir);
    for (const f of FILES) assert.equal(statSync(join(dir, f)).mtimeMs, before[f], `${f} was rewritten with the same content`);

    const built = readFileSync(join(dir, "status.js"));
    writeFileSync(join(dir, "status.js"), "stale");
    utimesSync(join(dir, "status.js"), old, old);
    buildInto(dir);
    assert.deepEqual(readFileSync(join(dir, "status.js")), built);
    assert.equal(statSync(join(dir, "app.js")).mtimeMs, before["app.js"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it("building public/ again (what every `npm start` does) leaves the files a running dev server serves alone", () => {
  const pub = (/** @type {string} */ f) => join("public", f);
  execFileSync(process.execPath, ["worker/build.mjs"], { stdio: "pipe" });
  const before = Object.fromEntries(FILES.map((f) => [f, statSync(pub(f)).mtimeMs]));
  execFileSync(process.execPath, ["worker/build.mjs"], { stdio: "pipe" });
  for (const f of FILES) assert.equal(statSync(pub(f)).mtimeMs, before[f], `public/${f} was rewritten`);
});
