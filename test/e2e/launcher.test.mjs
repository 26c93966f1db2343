// The launcher refuses an invalid configuration before starting anything, naming the field.
import { it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";

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
