// Runs a coding-agent CLI the way a user would, but hermetically: a fresh temp HOME (and TMPDIR,
// XDG dirs, a working directory) per run, an environment built from nothing but PATH and what the
// client is given, a hard timeout, and the whole process group killed afterwards (agents spawn
// shells, language servers and local servers of their own).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "../..");
// The agent CLIs live in a package of their own (test/agents/package.json says why).
export const BIN = join(REPO, "test/agents/node_modules/.bin");

/** @typedef {ReturnType<typeof makeSandbox>} Sandbox */

/**
 * Fresh directories for one client run: home, tmp, XDG config/data/cache/state, work (the cwd).
 * @param {string} name
 */
export function makeSandbox(name) {
  const root = mkdtempSync(join(tmpdir(), `switchyard-${name}-`));
  const dir = (/** @type {string} */ d) => {
    mkdirSync(join(root, d), { recursive: true });
    return join(root, d);
  };
  const dirs = { root, home: dir("home"), tmp: dir("tmp"), config: dir("config"), data: dir("data"), cache: dir("cache"), state: dir("state"), work: dir("work") };
  return {
    ...dirs,
    /** The base environment: Node 22 first on PATH, the sandbox's HOME, TMPDIR and XDG dirs. */
    env: {
      PATH: [dirname(process.execPath), join(REPO, "node_modules/node/bin"), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"].join(delimiter),
      HOME: dirs.home,
      USER: process.env.USER ?? "root",
      LOGNAME: process.env.USER ?? "root",
      SHELL: "/bin/bash",
      LANG: "C.UTF-8",
      TERM: "dumb",
      NO_COLOR: "1",
      TMPDIR: dirs.tmp,
      XDG_CONFIG_HOME: dirs.config,
      XDG_DATA_HOME: dirs.data,
      XDG_CACHE_HOME: dirs.cache,
      XDG_STATE_HOME: dirs.state,
    },
    /** agent-proof.txt's content in the working directory, or null. */
    proof(file = "agent-proof.txt") {
      const p = join(dirs.work, file);
      return existsSync(p) ? readFileSync(p, "utf8") : null;
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * Spawns `cmd args` in its own process group; resolves when it exits or `timeoutMs` passes (then the
 * group gets SIGTERM, and SIGKILL 3 s later). The group is killed after a normal exit too, so nothing
 * the client started survives it.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ cwd?: string, env?: NodeJS.ProcessEnv, timeoutMs?: number, stdin?: string }} [options]
 * @returns {Promise<ClientRun>}
 */
export function runClient(cmd, args, { cwd, env, timeoutMs = 120_000, stdin = "" } = {}) {
  const started = Date.now();
  const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (s) => (stdout += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (stderr += s));
  child.stdin.on("error", () => {});
  child.stdin.end(stdin);
  const killGroup = (/** @type {NodeJS.Signals} */ signal) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {}
  };
  let timedOut = false;
  /** @type {NodeJS.Timeout | undefined} */
  let hard;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup("SIGTERM");
    hard = setTimeout(() => killGroup("SIGKILL"), 3000);
  }, timeoutMs);
  return new Promise((resolve) => {
    let done = false;
    /**
     * @param {number | null} code
     * @param {NodeJS.Signals | null} signal
     * @param {Error} [error]
     */
    const finish = (code, signal, error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(hard);
      killGroup("SIGKILL");
      if (error) stderr += `\n[spawn error] ${error.message}\n`;
      resolve({ code, signal, timedOut, ms: Date.now() - started, stdout, stderr });
    };
    child.once("error", (e) => finish(null, null, e));
    // A grandchild may hold the pipes open after the client exited: kill the group on exit, then
    // give the pipes a moment to drain.
    child.once("exit", (code, signal) => {
      killGroup("SIGKILL");
      const drained = setTimeout(() => finish(code, signal), 2000);
      child.once("close", () => {
        clearTimeout(drained);
        finish(code, signal);
      });
    });
  });
}

/**
 * What a client run came to (`signal`: the one that ended it).
 * @typedef {{ code: number | null, signal: string | null, timedOut: boolean, ms: number, stdout: string, stderr: string }} ClientRun
 */

/**
 * The last `n` characters of a text, marked when cut.
 * @param {string} s
 */
export const tail = (s, n = 4000) => (s.length > n ? `…${s.slice(-n)}` : s);
