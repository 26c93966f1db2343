// Starts the proxies under test, each on 127.0.0.1 with file watching off where the runtime allows:
// Switchyard and the bare pass-through Worker under Miniflare (one workerd, no dev proxy) and under
// `wrangler dev` (its proxy in front; both run the bundle built once by `wrangler deploy --dry-run`,
// with --no-bundle, so an edit elsewhere in the tree cannot reload them mid-run), and Portkey's gateway
// on Node (installed into bench/portkey by `npm install --prefix`).
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { Miniflare, convertV4MiniflareOptions } from "miniflare";

const ROOT = resolve(import.meta.dirname, "../..");
const WRANGLER = join(ROOT, "node_modules/wrangler/bin/wrangler.js");
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The compatibility date and flags of a checkout's wrangler.toml (Miniflare does not read it): a
 * flag changes what the runtime does per request (e.g. Node-style timers), so a build runs with its own.
 */
export function compatOf(root = ROOT) {
  const toml = readFileSync(join(root, "wrangler.toml"), "utf8");
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1] ?? "";
  const date = /compatibility_date\s*=\s*"([^"]+)"/.exec(toml)?.[1];
  if (!date) throw new Error(`${join(root, "wrangler.toml")} has no compatibility_date`);
  return { compatibilityDate: date, compatibilityFlags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1]) };
}

/** @returns {Promise<number>} */
export function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (s.address());
      s.close(() => res(port));
    });
  });
}

/** The Durable Object classes bound in wrangler.toml (Miniflare does not read it). */
export function durableObjects() {
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  /** @type {Record<string, { className: string, useSQLite: boolean }>} */
  const out = {};
  for (const m of toml.matchAll(/\[\[durable_objects\.bindings\]\]\s*name\s*=\s*"([^"]+)"\s*class_name\s*=\s*"([^"]+)"/g)) out[m[1]] = { className: m[2], useSQLite: true };
  return out;
}

/**
 * `wrangler deploy --dry-run --outdir <tmp>` (minified per wrangler.toml): the Worker as deployed,
 * from this tree or from another checkout (`root`, e.g. one made by checkoutRevision).
 * @typedef {ReturnType<typeof buildWorker>} WorkerBuild
 */
export function buildWorker(root = ROOT) {
  mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".wrangler", "bench-"));
  execFileSync(process.execPath, [WRANGLER, "deploy", "--dry-run", "--outdir", dir], { cwd: root, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" } });
  const script = join(dir, "index.js");
  const bytes = readFileSync(script);
  return { dir, script, compat: compatOf(root), bytes: bytes.length, gzipBytes: gzipSync(bytes, { level: 9 }).length, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A Worker entry of the bench's own (TypeScript importing src/) bundled like the Worker (esbuild, the
 * workerd conditions, minified) into a temporary folder under .wrangler; `cleanup` removes it.
 * @param {string} entry
 */
export async function bundleEntry(entry) {
  mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".wrangler", "entry-"));
  const { build } = await import(pathToFileURL(join(ROOT, "node_modules/esbuild/lib/main.js")).href);
  const script = join(dir, "index.js");
  await build({ entryPoints: [entry], bundle: true, minify: true, format: "esm", platform: "neutral", mainFields: ["module", "main"], conditions: ["workerd", "worker", "browser"], external: ["cloudflare:*"], outfile: script, logLevel: "warning" });
  return { dir, script, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The tree of git revision `rev` in a temporary folder under .wrangler, with this checkout's
 * node_modules linked in (for builds of an older revision); `cleanup` removes it.
 * @param {string} rev
 */
export function checkoutRevision(rev) {
  mkdirSync(join(ROOT, ".wrangler"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".wrangler", "rev-"));
  execFileSync("sh", ["-c", `git archive ${rev} | tar -x -C ${dir}`], { cwd: ROOT });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * `without`: Durable Object bindings left out (a diagnostic: the Worker skips what needs them);
 * `compat`: the build's compatOf (default: this checkout's).
 * @param {string} script
 * @param {Record<string, string>} vars
 * @param {string[]} [without]
 * @returns {Promise<Proxy>}
 */
export async function miniflareSwitchyard(script, vars, without = [], compat = compatOf()) {
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: await freePort(),
      modules: true,
      scriptPath: script,
      ...compat,
      durableObjects: Object.fromEntries(Object.entries(durableObjects()).filter(([name]) => !without.includes(name))),
      bindings: vars,
    }),
  );
  return { url: (await mf.ready).origin, stop: () => mf.dispose() };
}

/**
 * A proxy under test: where it listens, and how to stop it.
 * @typedef {{ url: string, stop(): Promise<void> }} Proxy
 */

/**
 * @param {Record<string, string>} vars
 * @returns {Promise<Proxy>}
 */
export async function miniflarePassthrough(vars) {
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: await freePort(),
      modules: true,
      scriptPath: join(ROOT, "bench/passthrough-worker/index.js"),
      ...compatOf(join(ROOT, "bench/passthrough-worker")),
      bindings: vars,
    }),
  );
  return { url: (await mf.ready).origin, stop: () => mf.dispose() };
}

/**
 * @param {string} url
 * @param {import("node:child_process").ChildProcess} child
 * @param {string} what
 */
async function waitUp(url, child, what) {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2000) }).then((r) => r.arrayBuffer().then(() => r.status < 500), () => false);
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`${what} did not come up at ${url}`);
}

/**
 * Stops a process group started with `detached: true`, SIGKILL after 5 s.
 * @param {import("node:child_process").ChildProcess} child
 * @returns {Promise<void>}
 */
async function stopGroup(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const { pid } = child;
  if (pid === undefined) return; // never started (spawn failed)
  const gone = new Promise((r) => child.once("exit", r));
  try { process.kill(-pid, "SIGTERM"); } catch {}
  const t = setTimeout(() => { try { process.kill(-pid, "SIGKILL"); } catch {} }, 5000);
  await gone;
  clearTimeout(t);
}

/**
 * `wrangler dev <script> --no-bundle` with its own config, vars from an env file, state in a temp dir.
 * @param {{ script: string, config: string, vars: Record<string, string>, tmp: string, name: string, probe: string }} options
 */
async function wranglerDev({ script, config, vars, tmp, name, probe }) {
  const port = await freePort();
  const inspectorPort = await freePort();
  const envFile = join(tmp, `${name}.env`);
  writeFileSync(envFile, Object.entries(vars).map(([k, v]) => `${k}='${v}'`).join("\n") + "\n");
  const child = spawn(
    process.execPath,
    [WRANGLER, "dev", script, "--no-bundle", "-c", config, "--ip", "127.0.0.1", "--port", String(port), "--env-file", envFile, "--persist-to", join(tmp, `${name}-state`), "--inspector-port", String(inspectorPort), "--show-interactive-dev-session=false", "--log-level", "warn"],
    { cwd: ROOT, detached: true, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" } },
  );
  let err = "";
  child.stderr.on("data", (b) => (err = (err + b).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUp(url + probe, child, `wrangler dev (${name})`);
  } catch (e) {
    await stopGroup(child);
    throw new Error(`${e instanceof Error ? e.message : e}\n${err}`);
  }
  return { url, inspectorPort, stop: () => stopGroup(child) };
}

/**
 * @param {{ script: string, dir: string }} build the bundle, and the folder for wrangler's state
 * @param {Record<string, string>} vars
 */
export function devSwitchyard(build, vars) {
  return wranglerDev({ script: build.script, config: join(ROOT, "wrangler.toml"), vars, tmp: build.dir, name: "switchyard", probe: "/health" });
}

/**
 * @param {{ dir: string }} build where wrangler keeps its state (a build's folder, or any temporary one)
 * @param {Record<string, string>} vars
 */
export function devPassthrough(build, vars) {
  return wranglerDev({ script: join(ROOT, "bench/passthrough-worker/index.js"), config: join(ROOT, "bench/passthrough-worker/wrangler.toml"), vars, tmp: build.dir, name: "passthrough", probe: "/fast/v1/models" });
}

const PORTKEY_DIR = join(ROOT, "bench/portkey");
const PORTKEY_MAIN = join(PORTKEY_DIR, "node_modules/@portkey-ai/gateway/build/start-server.js");

/** Installs bench/portkey's pinned dependencies (its own lockfile) unless they are already there. */
export function installPortkey() {
  const want = JSON.parse(readFileSync(join(PORTKEY_DIR, "package.json"), "utf8")).dependencies["@portkey-ai/gateway"];
  const have = existsSync(PORTKEY_MAIN) && JSON.parse(readFileSync(join(PORTKEY_DIR, "node_modules/@portkey-ai/gateway/package.json"), "utf8")).version;
  if (have === want) return;
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  execFileSync(npm, ["install", "--prefix", PORTKEY_DIR, "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: PORTKEY_DIR, stdio: ["ignore", "ignore", "inherit"] });
}

export function portkeyVersions() {
  const v = (/** @type {string} */ p) => JSON.parse(readFileSync(join(PORTKEY_DIR, "node_modules", p, "package.json"), "utf8")).version;
  return { gateway: v("@portkey-ai/gateway"), hono: v("hono"), nodeServer: v("@hono/node-server"), nodeWs: v("@hono/node-ws") };
}

/** Portkey's gateway on Node (`start-server.js --headless`), same Node as this process. */
export async function startPortkey() {
  const port = await freePort();
  const child = spawn(process.execPath, [PORTKEY_MAIN, `--port=${port}`, "--headless"], { cwd: PORTKEY_DIR, detached: true, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, NODE_ENV: "production" } });
  let err = "";
  child.stderr.on("data", (b) => (err = (err + b).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUp(url + "/", child, "Portkey gateway");
  } catch (e) {
    await stopGroup(child);
    throw new Error(`${e instanceof Error ? e.message : e}\n${err}`);
  }
  return { url, stop: () => stopGroup(child) };
}
