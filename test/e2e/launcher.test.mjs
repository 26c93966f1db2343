// The launcher refuses an invalid configuration before starting anything, naming the field; with
// LLAMA_MODEL it runs a llama-server and serves the same file to tabs (a real tab in headless
// Chromium answers from it), and stops everything with itself.
import { it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { basename } from "node:path";
import { chromium } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";
const FLAGS = ["--headless=new", "--no-sandbox", "--enable-unsafe-webgpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

/** @typedef {import("openai/resources/chat/completions").ChatCompletion} ChatCompletion */

it("npm start refuses an invalid SWITCHYARD_CONFIG and says where", () => {
  const r = spawnSync(process.execPath, ["scripts/start.mjs", "--var", 'SWITCHYARD_CONFIG:{"models":{"m":{"targets":[{"kind":"llama","url":"nope"}]}}}'], { encoding: "utf8", timeout: 30_000 });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /models\.m\.targets\[0\]\.url must be an http:\/\/ or https:\/\/ URL/);
});

it("npm start says how to get llama-server when LLAMA_MODEL is set and none exists", async () => {
  const { freePort } = await import("../support/llama-server.mjs");
  // A port of its own: without one the launcher probes 8787 and up, which launcher-port.test.mjs
  // holds and binds meanwhile in another lane (seen: its wrangler found 8788 taken).
  const r = spawnSync(process.execPath, ["scripts/start.mjs", "--port", String(await freePort())], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, LLAMA_MODEL: "package.json", LLAMA_SERVER_BIN: "/nonexistent/llama-server" },
  });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /no llama-server binary was found/);
  assert.match(r.stderr, /LLAMA_SERVER_BIN/);
});

it("npm start with LLAMA_MODEL: one file serves the local llama-server and a tab, and both stop with it", async (t) => {
  const { ensureTestModel, freePort, literalGrammar } = await import("../support/llama-server.mjs");
  const { startLauncher } = await import("../support/switchyard-dev.mjs");
  const llamaPort = await freePort();
  const model = ensureTestModel();
  const MODEL = basename(model).replace(/\.gguf$/, "");
  // A 512-token window on the box (one slot): a prompt longer than that only a tab's 4096 can hold.
  const proxy = await startLauncher({
    vars: { LLAMA_URL: `http://127.0.0.1:${llamaPort}` },
    env: { LLAMA_MODEL: model, LLAMA_ARGS: "-c 512 -np 1 -t 1" },
  });
  /** @type {import("playwright-core").Browser | undefined} */
  let browser;
  let ggufUrl = "";
  try {
    // llama-server may still be loading: the proxy answers 503 model_loading until it is ready.
    let res;
    for (let i = 0; i < 100; i++) {
      res = await fetch(`${proxy.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "local", messages: [{ role: "user", content: "hi" }], max_tokens: 20, grammar: 'root ::= "launched"' }),
      });
      if (res.status === 200) break;
      assert.ok([502, 503].includes(res.status), `unexpected ${res.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(/** @type {ChatCompletion} */ (await res?.json()).choices[0].message.content, "launched");

    // The printed links: the page with the run's serve token, and the GGUF the launcher serves to tabs.
    const logs = proxy.logs();
    const pageLink = /serve from this browser: (\S+)/.exec(logs)?.[1] ?? "";
    ggufUrl = /tabs can serve the same model: (\S+)/.exec(logs)?.[1] ?? "";
    const token = new URL(pageLink).hash.replace(/^#serve=/, "");
    assert.ok(token && ggufUrl, logs);
    assert.equal(new URL(ggufUrl).pathname, `/${MODEL}.gguf`);
    const offered = await fetch(`${proxy.url}/v1/sessions/models`, { headers: { authorization: `Bearer ${token}` } });
    assert.deepEqual(await offered.json(), { object: "list", data: [{ model: MODEL, gguf: ggufUrl }] });

    if (!existsSync(CHROMIUM)) {
      t.diagnostic("chromium is not installed (apt-get install chromium): the tab's part is skipped");
      return;
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
    const page = await browser.newPage();
    /** @type {string[]} */
    const fetched = [];
    page.on("request", (r) => fetched.push(r.url()));
    await page.goto(`${pageLink}&model=${encodeURIComponent(MODEL)}&start=1`);
    await page.waitForSelector("#serve-status:has-text('Serving')", { timeout: 60_000 });
    assert.match(/** @type {string} */ (await page.textContent("#loaded")), new RegExp(`Loaded: ${MODEL} with llama\\.cpp`));
    assert.ok(fetched.includes(ggufUrl), `the tab ran the launcher's file: ${JSON.stringify(fetched.filter((u) => u.includes(".gguf")))}`);

    // About 1,300 tokens of prompt: over the box's window, within the tab's. Only the tab can answer it.
    const long = "Read this sentence and wait for the question at the end. ".repeat(140);
    const answer = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: `${long}Say it.` }], max_tokens: 40, grammar: literalGrammar("Answered in the tab from the same file.") }),
    });
    const body = /** @type {ChatCompletion & { x_switchyard?: { target?: string } }} */ (await answer.json());
    assert.equal(answer.status, 200, JSON.stringify(body));
    assert.equal(body.choices[0].message.content, "Answered in the tab from the same file.");
    assert.equal(body.x_switchyard?.target, `browser:${MODEL}`);
    assert.ok((body.usage?.prompt_tokens ?? 0) > 512, `the tab's own prompt count is over the box's window: ${JSON.stringify(body.usage)}`);
  } finally {
    await browser?.close();
    await proxy.stop();
  }
  // Stopped with the launcher: nothing listens on the llama-server's port or the GGUF's any more.
  await assert.rejects(fetch(`http://127.0.0.1:${llamaPort}/health`));
  if (ggufUrl) await assert.rejects(fetch(ggufUrl));
});
