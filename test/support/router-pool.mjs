// llama-server routers (router mode: `--models-dir`, no `-m`) for tests and the bench: a models dir
// with copies of the tiny test model under several names plus a truncated GGUF that fails to load,
// several routers over it, and the loads each has made (its log's "spawning server instance" lines).
//
//   const routers = await startRouters({ count: 2, modelsMax: 1 });
//   routers.loads()            // { alpha: 2, beta: 1, … } across every router
//   await routers.status(0)    // { alpha: "loaded", beta: "unloaded", … } from router 0's /models
//   await routers.stop();
import { spawn } from "node:child_process";
import { mkdtempSync, openSync, readSync, closeSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureLlamaServer, ensureTestModel, freePort } from "./llama-server.mjs";

// Routers still running when the test process exits are killed with their model processes.
/** @type {Set<number>} */
const live = new Set();
process.once("exit", () => {
  for (const pid of live) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {}
  }
});

/** The models every test router serves: the tiny model three times, and one that fails to load. */
export const GOOD_MODELS = ["alpha", "beta", "gamma"];
export const BROKEN_MODEL = "broken";

/**
 * A models dir: symlinks to the tiny model named after `names`, and `broken.gguf`, the model's first
 * 200 KB (its header is cut short, so the load fails in a few ms).
 * @param {string[]} names
 */
export function makeModelsDir(names = GOOD_MODELS) {
  const dir = mkdtempSync(join(tmpdir(), "sy-router-models-"));
  const model = ensureTestModel();
  for (const n of names) symlinkSync(model, join(dir, `${n}.gguf`));
  const fd = openSync(model, "r");
  const head = Buffer.alloc(200_000);
  readSync(fd, head, 0, head.length, 0);
  closeSync(fd);
  writeFileSync(join(dir, `${BROKEN_MODEL}.gguf`), head);
  return dir;
}

/**
 * @typedef {{ url: string, port: number, logs(): string, loads(): Record<string, number>, stop(): Promise<void> }} Router
 * @typedef {{ routers: Router[], dir: string, loads(): Record<string, number>, totalLoads(models?: string[]): number,
 *             status(i: number): Promise<Record<string, string>>, stop(): Promise<void> }} Routers
 */

/**
 * `count` routers over one models dir, each `--models-max modelsMax -np parallel -t 1 -tb 1 --poll 0`
 * (model processes inherit the router's arguments, so several run at once without thrashing).
 * @param {{ count?: number, modelsMax?: number, parallel?: number, names?: string[] }} [opts]
 * @returns {Promise<Routers>}
 */
export async function startRouters({ count = 2, modelsMax = 1, parallel = 2, names = GOOD_MODELS } = {}) {
  const dir = makeModelsDir(names);
  const routers = await Promise.all(Array.from({ length: count }, () => startRouter(dir, modelsMax, parallel)));
  const loads = () => {
    /** @type {Record<string, number>} */
    const all = {};
    for (const r of routers) for (const [m, n] of Object.entries(r.loads())) all[m] = (all[m] ?? 0) + n;
    return all;
  };
  return {
    routers,
    dir,
    loads,
    totalLoads: (models) => Object.entries(loads()).filter(([m]) => !models || models.includes(m)).reduce((s, [, n]) => s + n, 0),
    async status(i) {
      const res = await fetch(`${routers[i].url}/models`);
      const body = /** @type {{ data: Array<{ id: string, status: { value: string } }> }} */ (await res.json());
      return Object.fromEntries(body.data.map((m) => [m.id, m.status.value]));
    },
    async stop() {
      await Promise.all(routers.map((r) => r.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * @param {string} dir
 * @param {number} modelsMax
 * @param {number} parallel
 * @returns {Promise<Router>}
 */
async function startRouter(dir, modelsMax, parallel) {
  const port = await freePort();
  const argv = ["--models-dir", dir, "--models-max", String(modelsMax), "-np", String(parallel), "-c", String(1024 * parallel), "-t", "1", "-tb", "1", "--poll", "0", "--host", "127.0.0.1", "--port", String(port), "--no-webui"];
  // Its own process group: stopping the router stops the model processes it started.
  const child = spawn(ensureLlamaServer(), argv, { stdio: ["ignore", "pipe", "pipe"], detached: true, env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^LLAMA_(ARG_|API_KEY)/.test(k))) });
  let log = "";
  const keep = (/** @type {string} */ s) => {
    // Only the lines that matter here; a model process's own log is long.
    for (const line of s.split("\n")) if (/spawning server instance with name=|evicting|failed to load|stopping model/.test(line)) log += line + "\n";
  };
  child.stdout.setEncoding("utf8").on("data", keep);
  child.stderr.setEncoding("utf8").on("data", keep);
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`router exited early:\n${log}`);
    try {
      const res = await fetch(`${url}/health`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`router not ready at ${url}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const stop = async () => {
    if (child.exitCode !== null) return;
    try {
      process.kill(-(/** @type {number} */ (child.pid)), "SIGTERM");
    } catch {}
    const timer = setTimeout(() => {
      try {
        process.kill(-(/** @type {number} */ (child.pid)), "SIGKILL");
      } catch {}
    }, 5000);
    await exited;
    clearTimeout(timer);
  };
  live.add(/** @type {number} */ (child.pid));
  child.once("exit", () => live.delete(/** @type {number} */ (child.pid)));
  return {
    url,
    port,
    logs: () => log,
    loads() {
      /** @type {Record<string, number>} */
      const n = {};
      for (const m of log.matchAll(/spawning server instance with name=(\S+) on port/g)) n[m[1]] = (n[m[1]] ?? 0) + 1;
      return n;
    },
    stop,
  };
}

/**
 * A chat request whose answer is exactly `text` (a one-literal grammar), non-stream.
 * @param {string} base  Switchyard's (or a router's) URL
 * @param {string} model
 * @param {{ text?: string, stream?: boolean }} [opts]
 */
export async function ask(base, model, { text = `hi from ${model}`, stream = false } = {}) {
  const t0 = performance.now();
  const send = () =>
    fetch(`${base}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 32, temperature: 0, stream, grammar: `root ::= ${JSON.stringify(text)}` }),
    });
  let res;
  try {
    res = await send();
  } catch (e) {
    // A router closes pooled keep-alive connections now and then ("other side closed", before any
    // response): the pinned baseline, which talks to routers directly, retries once as Switchyard does.
    if (!/other side closed|ECONNRESET/.test(String(/** @type {Error} */ (e).cause ?? e))) throw e;
    res = await send();
  }
  const body = await res.text();
  const ms = performance.now() - t0;
  let content;
  if (res.ok && !stream) content = JSON.parse(body).choices?.[0]?.message?.content;
  if (res.ok && stream) content = body.split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? "").join("");
  return { status: res.status, ms, body, content, target: res.headers.get("x-switchyard-target"), attempts: res.headers.get("x-switchyard-attempts") };
}

/**
 * Two clients at once, each sending `perClient` requests that alternate alpha and beta (the clients
 * out of step), each to `base()` (a door at random, say). Resolves to every answer, with its model.
 * @param {() => string} base
 * @param {number} [perClient]
 */
export async function alternateModels(base, perClient = 20) {
  /** @type {Array<{ model: string } & Awaited<ReturnType<typeof ask>>>} */
  const answers = [];
  await Promise.all(
    [0, 1].map(async (c) => {
      for (let i = 0; i < perClient; i++) {
        const model = (i + c) % 2 ? "beta" : "alpha";
        answers.push({ model, ...(await ask(base(), model, { stream: i % 3 === 0 })) });
      }
    }),
  );
  return answers;
}
