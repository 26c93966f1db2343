// Starts Switchyard the way a user does — `npm start -- --port P --ip 127.0.0.1 --var …`, i.e. the
// launcher and `wrangler dev` on real workerd — for end-to-end tests, and stops its whole process
// group afterwards (wrangler runs two workerd children that would otherwise be orphaned).
import { spawn } from "node:child_process";
import { freePort } from "./llama-server.mjs";

/**
 * @typedef {Awaited<ReturnType<typeof startSwitchyard>>} Switchyard
 * @typedef {import("../../src/errors/error-envelope.ts").ErrorEnvelope} ErrorBody Switchyard's error envelope (docs/api.md)
 */

/**
 * `args`: more `wrangler dev` arguments (e.g. `--inspector-port`); `vars`: `--var` values (objects as JSON).
 * @param {{ vars?: Record<string, unknown>, env?: Record<string, string>, args?: string[], readyTimeoutMs?: number }} [options]
 */
export async function startSwitchyard(options = {}) {
  // The port is one the kernel handed out and took back (freePort): another server starting at the
  // same moment (test files run side by side) can be handed it first. Then start again on another.
  for (let tries = 1; ; tries++) {
    try {
      return await startOnce(await freePort(), options);
    } catch (e) {
      if (tries >= 3 || !String(e).includes("Address already in use")) throw e;
    }
  }
}

/**
 * @param {number} port
 * @param {{ vars?: Record<string, unknown>, env?: Record<string, string>, args?: string[], readyTimeoutMs?: number }} options
 */
async function startOnce(port, { vars = {}, env = {}, args: more = [], readyTimeoutMs = 60_000 }) {
  const args = ["scripts/start.mjs", "--port", String(port), "--ip", "127.0.0.1", ...more];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${typeof v === "string" ? v : JSON.stringify(v)}`);
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", ...env },
  });
  let logs = "";
  child.stdout.setEncoding("utf8").on("data", (s) => (logs += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (logs += s));
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  /** Signals the launcher's whole process group (wrangler and its workerd children). */
  const signalGroup = (/** @type {NodeJS.Signals} */ signal) => child.pid !== undefined && process.kill(-child.pid, signal);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`switchyard exited early (${child.exitCode}):\n${logs}`);
    try {
      const res = await fetch(`${url}/health`);
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
      if (child.exitCode !== null) return;
      try {
        signalGroup("SIGTERM");
      } catch {}
      const timer = setTimeout(() => {
        try {
          signalGroup("SIGKILL");
        } catch {}
      }, 4000);
      await exited;
      clearTimeout(timer);
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
