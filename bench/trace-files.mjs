#!/usr/bin/env node
// Which files of src/ a streamed chat request runs code in, measured rather than read: each rev's
// unminified build in Miniflare on zero config under dev (one llama-server at LLAMA_URL: the fast
// bench upstream, no keys), `POST /v1/chat/completions` ("stream": true, no tools) sent 1,500 times
// after a warm-up while V8's profiler samples every 50 µs (workerd's inspector; it refuses precise
// coverage), and every function on a sampled stack mapped back to its file by the build's source
// map. It counts more than the hand trace of docs/architecture.md ("One streamed chat request, file
// by file"): the answer's encoding, the isolate's background work, the Durable Objects (one isolate
// under Miniflare); a function far shorter than 50 µs may be missed, so counts move by a few files.
//   npx node bench/trace-files.mjs [--rev HEAD] [--rev 4b3b1aa …] [--requests 1500] [--list]
// Each --rev is built from a snapshot (git archive; its own `npm ci` when its lockfile differs).
// Prints, per rev, the files and folders of src/ seen, and the same less the hand trace's leaves.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { SourceMap } from "node:module";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";
import { post } from "./overhead/client.mjs";
import { inspectorSession } from "./overhead/inspector.mjs";
import { compatOf, freePort } from "./overhead/runtimes.mjs";
import { startBenchUpstream } from "./overhead/upstream.mjs";

const ROOT = resolve(import.meta.dirname, "..");
const { values: flags } = parseArgs({ options: { rev: { type: "string", multiple: true, default: ["HEAD"] }, list: { type: "boolean", default: false }, requests: { type: "string", default: "1500" } } });
const REQUESTS = Number(flags.requests);

/** The leaves every stage uses, which the hand trace names and does not count (docs/architecture.md). */
const LEAVES = ["errors/proxy-error.ts", "lib/ids.ts", "lib/deadlines.ts", "config/load-config.ts", "config/config.ts", "events/", "health/health-client.ts", "routing/isolate/isolate-state.ts", "http/fetch-fresh.ts"];

/**
 * A snapshot of `rev` (git archive) with its own dependencies: this checkout's when its lockfile is
 * the same, else installed from its lockfile (an older rev may use a package since removed).
 * @param {string} rev
 */
function checkout(rev) {
  mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".wrangler", "rev-"));
  execFileSync("sh", ["-c", `git archive ${rev} | tar -x -C ${dir}`], { cwd: ROOT });
  if (readFileSync(join(dir, "package-lock.json"), "utf8") === readFileSync(join(ROOT, "package-lock.json"), "utf8")) symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  else execFileSync("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The Durable Object classes a checkout's wrangler.toml binds (Miniflare does not read it).
 * @param {string} root
 */
function durableObjectsOf(root) {
  const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
  return Object.fromEntries([...toml.matchAll(/\[\[durable_objects\.bindings\]\]\s*name\s*=\s*"([^"]+)"\s*class_name\s*=\s*"([^"]+)"/g)].map((m) => [m[1], { className: m[2], useSQLite: true }]));
}

/**
 * One rev: its src/ files whose functions were on a sampled stack while it answered REQUESTS streamed chat requests.
 * @param {string} rev @param {string} upstream
 */
async function traceRev(rev, upstream) {
  const snapshot = checkout(rev);
  const out = mkdtempSync(join(ROOT, ".wrangler", "trace-"));
  try {
    execFileSync(process.execPath, [join(ROOT, "node_modules/wrangler/bin/wrangler.js"), "deploy", "--dry-run", "--outdir", out, "--minify=false"], { cwd: snapshot.dir, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" } });
    const map = new SourceMap(JSON.parse(readFileSync(join(out, "index.js.map"), "utf8")));
    const inspectorPort = await freePort();
    const mf = new Miniflare(
      convertV4MiniflareOptions({ host: "127.0.0.1", port: await freePort(), inspectorPort, modules: true, scriptPath: join(out, "index.js"), ...compatOf(snapshot.dir), durableObjects: durableObjectsOf(snapshot.dir), bindings: { SWITCHYARD_ENV: "dev", LLAMA_URL: upstream } }),
    );
    try {
      const url = `${(await mf.ready).origin}/v1/chat/completions`;
      const inspector = await inspectorSession(inspectorPort);
      const { call } = inspector;
      await call("Profiler.enable");
      await call("Profiler.setSamplingInterval", { interval: 50 });
      const body = { model: "m", messages: [{ role: "user", content: "hi" }], stream: true };
      // Warm: the isolate's start, the first reads of the server (its slots, its props), the
      // background reports; then a pause for their timers.
      for (let i = 0; i < 200; i++) {
        const r = await post(url, body);
        if (r.status !== 200) throw new Error(`${rev}: the Worker answered ${r.status} ${r.text}`);
      }
      await new Promise((r) => setTimeout(r, 2500));
      await call("Profiler.start");
      for (let i = 0; i < REQUESTS; i++) await post(url, body);
      const { profile } = await call("Profiler.stop");
      inspector.close();
      // Every function on a sampled stack (not only its top): a function that runs for every request
      // is on some stack among REQUESTS requests sampled every 50 µs unless it takes well under that.
      const files = new Set();
      for (const node of profile.nodes) {
        const f = node.callFrame;
        if (!/index\.js$/.test(f.url) || f.lineNumber < 0) continue;
        const entry = map.findEntry(f.lineNumber, f.columnNumber);
        const file = entry && "originalSource" in entry ? entry.originalSource : "";
        const at = file.lastIndexOf("/src/");
        if (at >= 0) files.add(file.slice(at + 5));
      }
      return [...files].sort();
    } finally {
      await mf.dispose();
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
    snapshot.cleanup();
  }
}

const up = await startBenchUpstream();
try {
  for (const rev of flags.rev) {
    const files = await traceRev(rev, `http://127.0.0.1:${up.port}/fast`);
    const counted = files.filter((f) => !LEAVES.some((l) => (l.endsWith("/") ? f.startsWith(l) : f === l)));
    const folders = (/** @type {string[]} */ list) => new Set(list.map((f) => f.split("/").slice(0, -1).join("/") || "src")).size;
    const short = execFileSync("git", ["rev-parse", "--short", rev], { cwd: ROOT, encoding: "utf8" }).trim();
    console.log(`${rev} (${short}): ${files.length} files in ${folders(files)} folders ran code; less the hand trace's leaves: ${counted.length} files in ${folders(counted)} folders`);
    if (flags.list) for (const f of files) console.log(`  ${counted.includes(f) ? " " : "·"} ${f}`);
  }
} finally {
  await up.close();
}
