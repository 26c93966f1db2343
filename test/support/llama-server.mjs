// Starts and stops a real llama.cpp `llama-server` for tests (vitest globalSetup, node:test e2e files,
// scripts/record-llama-fixtures.mjs). Node 22 ESM, no dependencies.
//
//   const srv = await startLlamaServer();            // tiny random model, 127.0.0.1:<free port>
//   await fetch(`${srv.url}/v1/chat/completions`, …);
//   await srv.stop();
//
// The binary and the model come from `npm test`'s pretest (scripts/pretest.mjs); these helpers never
// build anything slow themselves.
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, join } from "node:path";
import { llamaCache } from "../../scripts/llama-cache.mjs";
import { makeTestModel, testModelPath } from "../../scripts/make-test-model.mjs";

const HINT = "run `npm test` (its pretest builds llama-server and the test model, ≈10 min once) or `node scripts/pretest.mjs`, or set LLAMA_SERVER_BIN";

/** @param {string} p */
function isExecutable(p) {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Path of the llama-server binary: `LLAMA_SERVER_BIN`, else `llama-server` on PATH, else the cached
 * build from scripts/llama-server-build.mjs. Throws with instructions if there is none.
 * @returns {string}
 */
export function ensureLlamaServer() {
  const fromEnv = process.env.LLAMA_SERVER_BIN;
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`LLAMA_SERVER_BIN=${fromEnv} is not an executable file`);
    return fromEnv;
  }
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && isExecutable(join(dir, "llama-server"))) return join(dir, "llama-server");
  }
  const { bin } = llamaCache();
  if (isExecutable(bin)) return bin;
  throw new Error(`llama-server not found (no LLAMA_SERVER_BIN, none on PATH, no build at ${bin}): ${HINT}`);
}

/**
 * Path of the tiny random-weight test model (`SWITCHYARD_TEST_MODEL` or the cached one), writing it
 * if the cache has the vocab but not the model yet (≈2 s). Throws with instructions otherwise.
 * @returns {string}
 */
export function ensureTestModel() {
  const p = testModelPath();
  if (existsSync(p)) return p;
  try {
    return makeTestModel();
  } catch (e) {
    throw new Error(`test model ${p} is missing and could not be written (${e instanceof Error ? e.message : e}): ${HINT}`);
  }
}

/**
 * An upstream URL where nothing listens, ever: a privileged port the kernel never hands out for
 * port 0, so no server a test starts later (nor wrangler's own ports) can land on it, as a port
 * taken from freePort() and released could.
 */
export const DEAD_UPSTREAM = "http://127.0.0.1:9";

/**
 * A free TCP port on 127.0.0.1 (bind port 0, close, reuse).
 * @returns {Promise<number>}
 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

/** Keeps the last `max` characters of a process's output. */
class RingLog {
  /** @param {number} max */
  constructor(max) {
    this.max = max;
    /** @type {string[]} */
    this.parts = [];
    this.size = 0;
    this.dropped = 0;
  }
  /** @param {string} s */
  push(s) {
    this.parts.push(s);
    this.size += s.length;
    while (this.size > this.max && this.parts.length > 1) {
      const p = /** @type {string} */ (this.parts.shift());
      this.size -= p.length;
      this.dropped += p.length;
    }
  }
  toString() {
    const s = this.parts.join("");
    return this.dropped ? `…(${this.dropped} chars dropped)…\n${s}` : s;
  }
}

// Children still running when the test process exits are killed, so no llama-server is orphaned.
/** @type {Set<import("node:child_process").ChildProcess>} */
const live = new Set();
process.once("exit", () => {
  for (const c of live) {
    try {
      c.kill("SIGKILL");
    } catch {}
  }
});

/** process.env without llama.cpp's LLAMA_ARG_* / LLAMA_API_KEY variables, which would change flags. */
function hermeticEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^LLAMA_(ARG_|API_KEY)/.test(k)));
}

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Spawns llama-server on a free 127.0.0.1 port and waits until `GET /health` answers 200.
 *
 * @param {{ bin?: string, model?: string, port?: number, ctx?: number, parallel?: number, threads?: number, args?: string[],
 *           apiKey?: string, readyTimeoutMs?: number, waitReady?: boolean, logLimit?: number,
 *           env?: Record<string,string> }} [opts]
 *   `port`: listen there instead of on a free port (a server restarted where it was, as an operator's
 *   would be); a failure to bind it is thrown, not retried on another port.
 *   `ctx` is the total context; explicit `parallel` slots split it (2048 / 4 = 512 tokens per slot).
 *   `threads` defaults to 1: the model is tiny, and on a busy 2-core machine llama.cpp's spinning
 *   worker threads slow each other down several-fold (measured 2.6 s vs 7.2 s for 92 tokens).
 *   `args` are appended to the defaults (a later flag wins in llama.cpp's parser).
 *   `waitReady: false` returns right after spawning (to observe the 503 "Loading model" phase);
 *   then await `server.ready` yourself.
 * @returns {Promise<LlamaServer>}
 */
export async function startLlamaServer({
  bin,
  model,
  port: fixedPort,
  ctx = 2048,
  parallel = 4,
  threads = 1,
  args = [],
  apiKey,
  readyTimeoutMs = 60_000,
  waitReady = true,
  logLimit = 256 * 1024,
  env,
} = {}) {
  bin ??= ensureLlamaServer();
  model ??= ensureTestModel();
  let lastError;
  // The port is free when chosen but could be taken before llama-server binds it: retry then.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = fixedPort ?? (await freePort());
    const server = launch({ bin, model, port, ctx, parallel, threads, args, apiKey, readyTimeoutMs, logLimit, env });
    if (!waitReady) {
      server.ready.catch(() => {}); // the caller may never await it
      return server;
    }
    try {
      await server.ready;
      return server;
    } catch (e) {
      lastError = e;
      await server.stop();
      if (fixedPort !== undefined || !/couldn't bind|address already in use/i.test(server.logs())) break;
    }
  }
  throw lastError;
}

/**
 * A started llama-server. `pid` is undefined when the binary could not be spawned (`exited` then
 * carries the error).
 * @typedef {{ url: string, port: number, pid: number | undefined, argv: string[], ready: Promise<void>,
 *           logs(): string, exited: Promise<ExitInfo>, stop(): Promise<void>, kill(signal?: NodeJS.Signals): void }} LlamaServer
 * @typedef {{ code: number | null, signal: NodeJS.Signals | null, error?: Error }} ExitInfo
 */

/**
 * @param {{ bin: string, model: string, port: number, ctx: number, parallel: number, threads: number, args: string[],
 *           apiKey?: string, readyTimeoutMs: number, logLimit: number, env?: Record<string, string> }} options
 * @returns {LlamaServer}
 */
function launch({ bin, model, port, ctx, parallel, threads, args, apiKey, readyTimeoutMs, logLimit, env }) {
  const argv = [
    "-m", model,
    "--host", "127.0.0.1",
    "--port", String(port),
    "-c", String(ctx),
    "-np", String(parallel),
    "-t", String(threads),
    "-tb", String(threads),
    "--no-webui",
    ...(apiKey ? ["--api-key", apiKey] : []),
    ...args,
  ];
  const log = new RingLog(logLimit);
  const child = spawn(bin, argv, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...hermeticEnv(), ...env },
  });
  live.add(child);
  child.stdout.setEncoding("utf8").on("data", (s) => log.push(s));
  child.stderr.setEncoding("utf8").on("data", (s) => log.push(s));
  /** Set by the exit handlers below. */
  let exitInfo = /** @type {ExitInfo | null} */ (null);
  /** @type {Promise<ExitInfo>} */
  const exited = new Promise((resolve) => {
    child.once("exit", (code, signal) => {
      exitInfo = { code, signal };
      live.delete(child);
      resolve(exitInfo);
    });
    child.once("error", (err) => {
      log.push(`\n[spawn error] ${err.message}\n`);
      exitInfo = { code: null, signal: null, error: err };
      live.delete(child);
      resolve(exitInfo);
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const cmdline = `${bin} ${argv.join(" ")}`;

  const ready = (async () => {
    const deadline = Date.now() + readyTimeoutMs;
    while (Date.now() < deadline) {
      if (exitInfo) {
        throw new Error(`llama-server exited (code ${exitInfo.code}, signal ${exitInfo.signal}) before it was ready\n$ ${cmdline}\n${log}`);
      }
      try {
        const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
        await res.arrayBuffer();
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    throw new Error(`llama-server not ready after ${readyTimeoutMs} ms at ${url}/health\n$ ${cmdline}\n${log}`);
  })();

  async function stop() {
    if (exitInfo) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => {
      if (!exitInfo) child.kill("SIGKILL");
    }, 3000);
    await exited;
    clearTimeout(timer);
  }

  return {
    url,
    port,
    pid: child.pid,
    argv,
    ready,
    exited,
    logs: () => log.toString(),
    stop,
    kill: (/** @type {NodeJS.Signals} */ signal = "SIGTERM") => {
      if (!exitInfo) child.kill(signal);
    },
  };
}

/**
 * A GBNF grammar whose only sentence is `text`: even a random-weight model then emits exactly
 * `text` and stops (reference llama-server §10). U+0008 and U+000C are not accepted by GBNF.
 * @param {string} text
 */
export function literalGrammar(text) {
  if (/[\b\f]/.test(text)) throw new Error("GBNF literals cannot contain U+0008 or U+000C");
  return `root ::= ${JSON.stringify(text)}`;
}

/**
 * One event of an SSE body.
 * @typedef {object} SseEvent
 * @property {string[]} comments
 * @property {Record<string, string>} fields
 * @property {string} [data]
 * @property {string} [error] old builds' `error:` field
 * @property {any} [json] the parsed payload: wire JSON, which the tests read as they assert on it
 */

/**
 * Splits an SSE body into events: `{ data?, error?, comments[], fields }` per blank-line-separated
 * block; `json` is the parsed `data:` (or old builds' `error:`) payload when it is JSON.
 * @param {string} text
 */
export function parseSse(text) {
  /** @type {SseEvent[]} */
  const events = [];
  for (const block of text.replace(/\r\n?/g, "\n").split(/\n\n+/)) {
    if (!block.trim()) continue;
    /** @type {SseEvent} */
    const ev = { comments: [], fields: {} };
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) {
        ev.comments.push(line.slice(1));
        continue;
      }
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      const value = i < 0 ? "" : line.slice(i + 1).replace(/^ /, "");
      ev.fields[field] = ev.fields[field] === undefined ? value : `${ev.fields[field]}\n${value}`;
    }
    ev.data = ev.fields.data;
    ev.error = ev.fields.error;
    const payload = ev.data ?? ev.error;
    if (payload !== undefined && payload !== "[DONE]") {
      try {
        ev.json = JSON.parse(payload);
      } catch {}
    }
    events.push(ev);
  }
  return events;
}
