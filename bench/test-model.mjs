#!/usr/bin/env node
// What the test model costs llama-server, the whole Qwen2 vocabulary against the cut one the suite
// uses (scripts/make-test-model.mjs): CPU to start, to write a literal through a grammar, to sample
// freely, and how many short free answers with tools its parser refuses. One llama-server at a time,
// `-t 1 --poll 0`, CPU read from /proc/PID/stat (Linux).
//   node bench/test-model.mjs [--answers 40]
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureLlamaServer, freePort } from "../test/support/llama-server.mjs";
import { makeTestModel, writeModelFile } from "../scripts/make-test-model.mjs";

const { values } = parseArgs({ options: { answers: { type: "string", default: "40" } } });
const ANSWERS = Number(values.answers);
const TEXT = "The quick brown fox jumps over the lazy dog while the function getUserById(id: string) returns a Promise<User>. ".repeat(10);
const TOOLS = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];

/** CPU-seconds (user + system) of process `pid` so far. @param {number} pid */
function cpuOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** @param {string} url @param {Record<string, unknown>} body */
async function chat(url, body) {
  const res = await fetch(`${url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], ...body }) });
  return { status: res.status, body: /** @type {any} */ (await res.json()) };
}

/** Measures one model file. @param {string} label @param {string} model */
async function measure(label, model) {
  const port = await freePort();
  const server = spawn(ensureLlamaServer(), ["-m", model, "--port", String(port), "-t", "1", "--poll", "0", "-c", "4096", "--jinja", "-np", "1"], { stdio: "ignore" });
  const pid = /** @type {number} */ (server.pid);
  const url = `http://127.0.0.1:${port}`;
  try {
    for (;;) {
      try {
        if ((await fetch(`${url}/health`)).ok) break;
      } catch {}
      await new Promise((r) => setTimeout(r, 50));
    }
    const started = cpuOf(pid);
    const literal = await chat(url, { grammar: `root ::= ${JSON.stringify(TEXT)}`, max_tokens: 2000 });
    const afterLiteral = cpuOf(pid);
    const free = await chat(url, { max_tokens: 300, ignore_eos: true });
    const afterFree = cpuOf(pid);
    let refused = 0;
    for (let seed = 0; seed < ANSWERS; seed++) if ((await chat(url, { tools: TOOLS, logprobs: true, max_tokens: 8, seed })).status !== 200) refused++;
    return {
      label,
      start: started,
      literal: afterLiteral - started,
      literalTokens: literal.body.usage?.completion_tokens,
      exact: literal.body.choices?.[0]?.message?.content === TEXT,
      free: afterFree - afterLiteral,
      freeTokens: free.body.usage?.completion_tokens,
      refused,
    };
  } finally {
    server.kill("SIGKILL");
  }
}

const whole = join(tmpdir(), `switchyard-whole-vocab-${process.pid}.gguf`);
try {
  writeModelFile(whole, { name: "switchyard-tiny-qwen2-whole-vocab", log: () => {} });
  const rows = [await measure("151,936 tokens (whole)", whole), await measure("the test model (cut)", makeTestModel())];
  console.log(`| model | start, CPU-s | ${TEXT.length}-character literal, CPU-s (tokens) | 300 free tokens, CPU-s | free answers with tools refused |`);
  console.log("|---|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.label} | ${r.start.toFixed(2)} | ${r.literal.toFixed(2)} (${r.literalTokens}${r.exact ? "" : ", NOT EXACT"}) | ${r.free.toFixed(2)} (${r.freeTokens}) | ${r.refused} of ${ANSWERS} |`);
} finally {
  rmSync(whole, { force: true });
  rmSync(`${whole}.json`, { force: true });
}
