// The serve link `npm start` prints names the server that answers: a port that was asked for and is
// taken is refused before anything starts; with no port asked for and 8787 taken, the launcher picks
// the next free one and prints that.
import { it } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { freePort } from "../support/llama-server.mjs";

const childEnv = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

/**
 * Holds `port` on 127.0.0.1 (a bare TCP server, as another program would); resolves to its closer, or null if it is already taken.
 * @param {number} port
 * @returns {Promise<(() => Promise<void>) | null>}
 */
function occupy(port) {
  return new Promise((resolve) => {
    const server = createServer((socket) => socket.destroy());
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => resolve(() => new Promise((r) => server.close(() => r()))));
  });
}

it("a busy --port is refused plainly before anything starts", async () => {
  const port = await freePort();
  const release = await occupy(port);
  try {
    const r = spawnSync(process.execPath, ["scripts/start.mjs", "--port", String(port), "--ip", "127.0.0.1"], { encoding: "utf8", timeout: 30_000, env: childEnv });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`port ${port} is already in use`));
    assert.doesNotMatch(r.stderr, /serve from this browser/);
  } finally {
    await release?.();
  }
});

it("8787 taken and no --port: the link names the port the server really listens on", { timeout: 180_000 }, async () => {
  const release = await occupy(8787);
  try {
    // wrangler binds sockets of its own beside the port (`direct:…`), on ports it picked free a moment
    // before: a server starting in another lane can take one first, and wrangler exits "Address
    // already in use". Such a start is tried again, at most three times (as startSwitchyard does).
    for (let tries = 1; ; tries++) {
      const logs = await launchWithoutPort();
      if (logs === null) return;
      assert.ok(tries < 3 && logs.includes("Address already in use"), `the printed address never answered:\n${logs}`);
    }
  } finally {
    await release?.();
  }
});

/**
 * `npm start` with no --port while 8787 is taken: its link names a port other than 8787, whose server
 * answers and takes the link's token. Null when it did; the launcher's output when it exited first.
 * @returns {Promise<string | null>}
 */
async function launchWithoutPort() {
  const child = spawn(process.execPath, ["scripts/start.mjs", "--ip", "127.0.0.1"], { detached: true, stdio: ["ignore", "pipe", "pipe"], env: childEnv });
  let logs = "";
  child.stdout.setEncoding("utf8").on("data", (s) => (logs += s));
  child.stderr.setEncoding("utf8").on("data", (s) => (logs += s));
  const exited = new Promise((r) => child.once("exit", r));
  const group = -(/** @type {number} */ (child.pid)); // the launcher's process group (it spawned: process.execPath)
  try {
    const deadline = Date.now() + 60_000;
    let link;
    while (!(link = logs.match(/serve from this browser: (http:\/\/127\.0\.0\.1:(\d+))\/#serve=([\w-]+)/))) {
      assert.ok(Date.now() < deadline && child.exitCode === null, `no serve link:\n${logs}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const [, origin, port, token] = link;
    assert.notEqual(port, "8787");
    for (;;) {
      try {
        if ((await fetch(`${origin}/health`)).status === 200) break;
      } catch {}
      if (child.exitCode !== null) return logs;
      assert.ok(Date.now() < deadline, `the printed address never answered:\n${logs}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const ticket = await fetch(`${origin}/v1/sessions/ticket`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
    assert.equal(ticket.status, 200, "the printed link's server is this launcher's (its token works)");
    return null;
  } finally {
    try {
      process.kill(group, "SIGTERM");
    } catch {}
    const kill = setTimeout(() => {
      try {
        process.kill(group, "SIGKILL");
      } catch {}
    }, 4000);
    await exited;
    clearTimeout(kill);
  }
}
