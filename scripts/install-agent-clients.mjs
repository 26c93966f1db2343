#!/usr/bin/env node
// Installs the coding-agent CLIs the end-to-end tests drive (test/agents/package.json says why they
// are a package of their own) once per version of their lockfile, outside the repository, and links
// test/agents/node_modules to that install: they are 1.4 GB, and a clean clone (CI) would otherwise
// install them again on every run (~50 s with a warm npm cache, minutes with a cold one).
// `npm install`, not `npm ci`: the lockfile written here cannot list other platforms' optional
// binaries, which `npm ci` would demand; `npm install` keeps to the locked versions and skips those.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { cacheBase } from "./llama-cache.mjs";

const dir = resolve("test/agents");
const FILES = ["package.json", "package-lock.json"];

/** The cached install for this lockfile: keyed by the hash of the folder's package files. */
export function agentClientsCache() {
  const hash = createHash("sha256");
  for (const f of FILES) hash.update(readFileSync(join(dir, f)));
  return join(cacheBase(), `agent-clients-${hash.digest("hex").slice(0, 16)}`);
}

export function installAgentClients(log = (/** @type {string} */ msg) => process.stderr.write(`[agents] ${msg}\n`)) {
  const cache = agentClientsCache();
  if (!existsSync(join(cache, "node_modules/.package-lock.json"))) {
    log(`installing the agent clients in ${cache} (about 1.4 GB, once per lockfile version)…`);
    const started = Date.now();
    // Installed beside the cache and moved into place: an interrupted install leaves no half cache.
    const staging = `${cache}.partial-${process.pid}`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    for (const f of FILES) copyFileSync(join(dir, f), join(staging, f));
    const r = spawnSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: staging, stdio: ["ignore", "inherit", "inherit"] });
    if (r.status !== 0) {
      rmSync(staging, { recursive: true, force: true });
      throw new Error(`npm install of the agent clients failed with ${r.status ?? r.signal}`);
    }
    rmSync(cache, { recursive: true, force: true });
    mkdirSync(dirname(cache), { recursive: true });
    renameSync(staging, cache);
    log(`installed in ${Math.round((Date.now() - started) / 1000)} s`);
  }
  // test/agents/node_modules is where the tests find the CLIs (test/support/agent-client.mjs): a link
  // to the cache, replacing an older link or a folder installed in place by an earlier version.
  const link = join(dir, "node_modules");
  const target = join(cache, "node_modules");
  let current = null;
  try {
    current = lstatSync(link);
  } catch {}
  if (current?.isSymbolicLink() && existsSync(link) && resolve(dirname(link), readlinkSync(link)) === target) return;
  if (current) rmSync(link, { recursive: true, force: true });
  symlinkSync(target, link, "dir");
}

if (import.meta.url === `file://${process.argv[1]}`) installAgentClients();
