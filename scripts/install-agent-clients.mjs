#!/usr/bin/env node
// Installs the coding-agent CLIs the end-to-end tests drive (test/agents/package.json says why they
// are a package of their own) when their install is missing or older than the folder's lockfile.
// `npm install`, not `npm ci`: the lockfile written here cannot list other platforms' optional
// binaries, which `npm ci` would demand; `npm install` keeps to the locked versions and skips those.
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";

const dir = "test/agents";
const installed = join(dir, "node_modules/.package-lock.json");
const lock = join(dir, "package-lock.json");

export function installAgentClients(log = (/** @type {string} */ msg) => process.stderr.write(`[agents] ${msg}\n`)) {
  const fresh = existsSync(installed) && statSync(installed).mtimeMs >= Math.max(statSync(lock).mtimeMs, statSync(join(dir, "package.json")).mtimeMs);
  if (fresh) return;
  log(`installing the agent clients in ${dir} (about 1.4 GB, once per lockfile change)…`);
  const started = Date.now();
  const r = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: dir, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error(`npm install in ${dir} failed with ${r.status ?? r.signal}`);
  log(`installed in ${Math.round((Date.now() - started) / 1000)} s`);
}

if (import.meta.url === `file://${process.argv[1]}`) installAgentClients();
