#!/usr/bin/env node
// Runs before `npm test`: makes sure a real llama-server and the tiny test model exist, so the tests
// never skip. The first run builds llama-server (≈10 min on 2 cores, scripts/llama-server-build.mjs);
// later runs take well under 1 s. Missing system tools fail the run with the exact install command.
// It also installs the coding-agent CLIs of the e2e tests (scripts/install-agent-clients.mjs).
//
//   LLAMA_SERVER_BIN=/path/llama-server    use that binary (the cache is still built for the vocab
//                                          the test model is made from, unless…)
//   SWITCHYARD_TEST_MODEL=/path/model.gguf use that model
import { existsSync } from "node:fs";
import { buildLlamaServer, requireTools } from "./llama-server-build.mjs";
import { llamaCache } from "./llama-cache.mjs";
import { makeTestModel } from "./make-test-model.mjs";
import { installAgentClients } from "./install-agent-clients.mjs";

const started = Date.now();
const log = (/** @type {string} */ msg) => process.stderr.write(`[pretest] ${msg}\n`);

try {
  const cache = llamaCache();
  const externalBin = process.env.LLAMA_SERVER_BIN;
  const externalModel = process.env.SWITCHYARD_TEST_MODEL;
  const cached = existsSync(cache.bin) && existsSync(cache.vocab);
  let bin;
  if (externalBin && (externalModel || cached)) {
    bin = buildLlamaServer(); // only checks that LLAMA_SERVER_BIN exists
  } else {
    if (!cached) requireTools(); // prints `apt-get install -y …` and exits 2 if cmake, c++, git… is missing
    delete process.env.LLAMA_SERVER_BIN; // build the cache (binary + vocab files) even if set
    bin = buildLlamaServer();
    if (externalBin) bin = process.env.LLAMA_SERVER_BIN = externalBin;
  }
  const model = makeTestModel({ log });
  installAgentClients();
  log(`llama-server: ${bin}`);
  log(`test model: ${model} (ready in ${Date.now() - started} ms)`);
} catch (e) {
  log(`failed: ${(e instanceof Error && e.stack) || e}`);
  process.exit(1);
}
