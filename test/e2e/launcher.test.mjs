// The launcher refuses an invalid configuration before starting anything, naming the field.
import { it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";

/** @typedef {import("openai/resources/chat/completions").ChatCompletion} ChatCompletion */

it("npm start refuses an invalid SWITCHYARD_CONFIG and says where", () => {
  const r = spawnSync(process.execPath, ["scripts/start.mjs", "--var", 'SWITCHYARD_CONFIG:{"models":{"m":{"targets":[{"kind":"llama","url":"nope"}]}}}'], { encoding: "utf8", timeout: 30_000 });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /models\.m\.targets\[0\]\.url must be an http:\/\/ or https:\/\/ URL/);
});

it("npm start says how to get llama-server when LLAMA_MODEL is set and none exists", () => {
  const r = spawnSync(process.execPath, ["scripts/start.mjs"], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, LLAMA_MODEL: "package.json", LLAMA_SERVER_BIN: "/nonexistent/llama-server" },
  });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /no llama-server binary was found/);
  assert.match(r.stderr, /LLAMA_SERVER_BIN/);
});

it("npm start with LLAMA_MODEL runs a local llama-server and stops it with itself", async () => {
  const { ensureTestModel, freePort } = await import("../support/llama-server.mjs");
  const { startSwitchyard } = await import("../support/switchyard-dev.mjs");
  const llamaPort = await freePort();
  const proxy = await startSwitchyard({
    vars: { LLAMA_URL: `http://127.0.0.1:${llamaPort}` },
    env: { LLAMA_MODEL: ensureTestModel(), LLAMA_ARGS: "-c 1024 -np 1 -t 1" },
  });
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
  } finally {
    await proxy.stop();
  }
  // Stopped with the launcher: nothing listens on its port any more.
  await assert.rejects(fetch(`http://127.0.0.1:${llamaPort}/health`));
});
