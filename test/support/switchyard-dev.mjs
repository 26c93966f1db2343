// Starts Switchyard on real workerd for end-to-end tests, two ways, and stops the whole process group
// afterwards (wrangler runs workerd children that would otherwise be orphaned):
// - startSwitchyard: `wrangler dev` with the arguments the launcher gives it (`--var SWITCHYARD_ENV:dev`,
//   `--ip`, `--port`, each `--var`): the Worker exactly as `npm start` serves it, without the launcher's
//   own start — it loads all of wrangler a second time to read the config (~2.5 CPU-s, ~2 s, on every
//   one of the suite's ~40 starts) and rebuilds the page, which pretest has built;
// - startLauncher: `npm start -- --port P --ip 127.0.0.1 --var …` (scripts/start.mjs), the way a user
//   does, for the tests of what the launcher itself does (its checks, generated tokens, links, logs).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./llama-server.mjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * @typedef {{ url: string, port: number, logs(): string, stop(): Promise<void> }} Switchyard
 * @typedef {import("../../src/errors/error-envelope.ts").ErrorEnvelope} ErrorBody Switchyard's error envelope (docs/api.md)
 * @typedef {{ vars?: Record<string, unknown>, env?: Record<string, string>, args?: string[], readyTimeoutMs?: number }} StartOptions
 *   `args`: more `wrangler dev` arguments (e.g. `--inspector-port`, `--config`); `vars`: `--var` values (objects as JSON).
 */

/**
 * Switchyard's Worker under `wrangler dev`, started as the launcher starts it.
 * @param {StartOptions} [options]
 * @returns {Promise<Switchyard>}
 */
export async function startSwitchyard({ vars = {}, env = {}, args = [], readyTimeoutMs = 60_000 } = {}) {
  // A state folder of its own unless the test names one (`--persist-to`): wrangler dev processes
  // sharing `.wrangler/state` run their own instances of an object on the same files: beside three
  // other end-to-end files, a batch's lines were refused as if its key had been revoked, 2 runs in 2
  // (0 in 2 with a folder each; which shared file did it is not known).
  const own = args.includes("--persist-to") ? undefined : mkdtempSync(join(tmpdir(), "switchyard-state-"));
  const persist = own ? ["--persist-to", own] : [];
  const forget = () => own && rmSync(own, { recursive: true, force: true });
  const started = await onFreePort((port) =>
    serve(join(ROOT, "node_modules/.bin/wrangler"), ["dev", ...prebuilt(args), "--var", "SWITCHYARD_ENV:dev", "--ip", "127.0.0.1", "--port", String(port), ...args, ...persist, ...varArgs(vars)], port, env, readyTimeoutMs),
  ).catch((e) => {
    forget();
    throw e;
  });
  if (!own) return started;
  return {
    ...started,
    async stop() {
      await started.stop();
      forget();
    },
  };
}

/**
 * The Worker `npm test` built once for every start (SWITCHYARD_TEST_WORKER, set by
 * scripts/run-tests.mjs: `wrangler deploy --dry-run`, the bundle a deploy uploads), served as it is
 * (`--no-bundle`): each start then skips esbuild's bundling of `src/` and its watch. Not for a start
 * with a config of its own (`--config`: the multi-door bed), nor when the variable is unset (a file
 * run by itself bundles `src/` as `wrangler dev` does).
 * @param {string[]} args
 */
function prebuilt(args) {
  const entry = process.env.SWITCHYARD_TEST_WORKER;
  return entry && !args.includes("--config") ? [entry, "--no-bundle"] : [];
}

/**
 * Switchyard the way a user starts it: the launcher (`npm start -- …`), which then runs `wrangler dev`.
 * @param {StartOptions} [options]
 * @returns {Promise<Switchyard>}
 */
export function startLauncher({ vars = {}, env = {}, args = [], readyTimeoutMs = 60_000 } = {}) {
  return onFreePort((port) =>
    serve(process.execPath, ["scripts/start.mjs", "--port", String(port), "--ip", "127.0.0.1", ...args, ...varArgs(vars)], port, env, readyTimeoutMs),
  );
}

/** `--var K:V` for each of `vars` (objects as JSON). @param {Record<string, unknown>} vars */
const varArgs = (vars) => Object.entries(vars).flatMap(([k, v]) => ["--var", `${k}:${typeof v === "string" ? v : JSON.stringify(v)}`]);

/**
 * Runs `start` on a port the kernel handed out and took back (freePort): another server starting at
 * the same moment (test files run side by side) can be handed it first. Then it starts again on another.
 * @param {(port: number) => Promise<Switchyard>} start
 */
async function onFreePort(start) {
  for (let tries = 1; ; tries++) {
    try {
      return await start(await freePort());
    } catch (e) {
      if (tries >= 3 || !String(e).includes("Address already in use")) throw e;
    }
  }
}

/**
 * Spawns `command` in a process group of its own and resolves once GET /health on `port` answers 200.
 * @param {string} command @param {string[]} args @param {number} port @param {Record<string, string>} env @param {number} readyTimeoutMs
 * @returns {Promise<Switchyard>}
 */
async function serve(command, args, port, env, readyTimeoutMs) {
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...env },
  });
  let logs = "";
  child.stdout.setEncoding("utf8").on("data", (s) => (logs += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (logs += s));
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  /** Signals the whole process group (the launcher, wrangler and its workerd children). */
  const signalGroup = (/** @type {NodeJS.Signals} */ signal) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {}
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`switchyard exited early (${child.exitCode}):\n${logs}`);
    try {
      const res = await fetch(`${url}/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {}
    if (Date.now() > deadline) {
      signalGroup("SIGKILL");
      throw new Error(`switchyard did not become ready in ${readyTimeoutMs} ms:\n${logs}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    port,
    logs: () => logs,
    async stop() {
      if (child.exitCode === null) {
        signalGroup("SIGTERM");
        const timer = setTimeout(() => signalGroup("SIGKILL"), 4000);
        await exited;
        clearTimeout(timer);
      }
      // Whatever of the group outlived its leader goes too. Seen: an esbuild service of the launcher's
      // left running, holding the output pipes open, so the test file's process never ended.
      signalGroup("SIGKILL");
    },
  };
}

/**
 * Reads an SSE response body: frames (parsed), whether [DONE] came, and the raw text.
 * @param {Response} res
 */
export async function readSse(res) {
  const raw = await res.text();
  const frames = [];
  let done = false;
  for (const block of raw.split("\n\n")) {
    if (!block || block.startsWith(":")) continue;
    const data = block.replace(/^data: /, "");
    if (data === "[DONE]") done = true;
    else frames.push(JSON.parse(data));
  }
  return { frames, done, raw };
}

/** @param {string} text */
export const grammar = (text) => `root ::= ${JSON.stringify(text)}`;

/**
 * A `chat` key made through the admin API of a running Switchyard; resolves with its secret.
 * @param {string} url the Switchyard's base URL
 * @param {string} adminToken its ADMIN_TOKEN
 * @param {string} name
 */
export async function createChatKey(url, adminToken, name) {
  const res = await fetch(`${url}/v1/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name, scopes: ["chat"] }),
  });
  if (res.status !== 201) throw new Error(`creating key ${name}: ${res.status} ${await res.text()}`);
  return /** @type {{ key: string }} */ (await res.json()).key;
}
