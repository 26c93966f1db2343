#!/usr/bin/env node
// A tab against a box on the same GGUF and the same machine: tokens per second and time to first token
// of llama.cpp in WebAssembly (wllama in headless Chromium, on the CPU: 1 thread, then 2 threads in the
// cross-origin isolated page) and of llama-server (1 thread, then 2), each generating the same number of
// tokens from the same prompt; then the relay's added latency per token: the same tab serving through
// `npm start` (the Worker, the hub, the WebSocket), its text's gaps as the HTTP client sees them against
// the engine's own per-token time (its timings). All clocks are this process's or the page's own.
//   npx node bench/tab-vs-server.mjs [--runs 5] [--tokens 64] [--write docs/benchmarks.md]
// --write replaces the block between the tab-vs-server markers in that file.
import { readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";
import { ensureTestModel, freePort, startLlamaServer } from "../test/support/llama-server.mjs";
import { startSwitchyard } from "../test/support/switchyard-dev.mjs";
import { serveGguf } from "../scripts/serve-gguf.mjs";
import { replaceMarkedBlock } from "./doc-block.mjs";

const { values: flags } = parseArgs({ options: { runs: { type: "string", default: "5" }, tokens: { type: "string", default: "64" }, write: { type: "string" } } });
const RUNS = Number(flags.runs);
const TOKENS = Number(flags.tokens);
const PROMPT = "The history of the railway switchyard";
const TOKEN = "bench-serve-token";
const HEADING = "## A tab against a box on the same GGUF";
const START = "<!-- tab-vs-server:start (written by bench/tab-vs-server.mjs --write) -->";
const END = "<!-- tab-vs-server:end -->";

/** @param {number[]} xs */
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor((s.length - 1) / 2)] + s[Math.ceil((s.length - 1) / 2)]) / 2 : NaN;
};
/** @param {number} x */
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : "–");

const model = ensureTestModel();
const MODEL = basename(model).replace(/\.gguf$/, "");
const gguf = await serveGguf(model, "127.0.0.1");
const dead = `http://127.0.0.1:${await freePort()}`;
const [proxy, browser] = await Promise.all([
  startSwitchyard({ vars: { SERVE_TOKEN: TOKEN, LLAMA_URL: dead, LLAMA_GGUF: gguf.url } }),
  chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless=new", "--no-sandbox", "--enable-unsafe-webgpu"] }),
]);
/** @type {Array<{ what: string, ttftMs: number, tps: number }>} */
const rows = [];
try {
  // The engine alone, in the page (the page's origin is cross-origin isolated: threads work).
  for (const threads of [1, 2]) {
    const page = await browser.newPage();
    await page.goto(`${proxy.url}/status.html`);
    const result = await page.evaluate(
      async ({ url, threads, runs, tokens, prompt, lib }) => {
        const { Wllama } = await import(lib);
        const quiet = () => {};
        const w = new Wllama({ default: "/vendor/wllama/wllama.wasm" }, { suppressNativeLog: true, logger: { debug: quiet, log: quiet, warn: quiet, error: console.error } });
        await w.loadModelFromUrl(url, { useCache: false, n_ctx: 1024, n_threads: threads, n_gpu_layers: 0 });
        const out = [];
        for (let i = 0; i < runs; i++) {
          const t0 = performance.now();
          let first = 0, tps = 0;
          for await (const c of await w.createCompletion({ prompt, max_tokens: tokens, ignore_eos: true, temperature: 0, stream: true, cache_prompt: false })) {
            if (!first && c.choices?.[0]?.text) first = performance.now() - t0;
            if (c.timings) tps = c.timings.predicted_per_second;
          }
          out.push({ first, tps });
        }
        const mt = w.isMultithread();
        await w.exit();
        return { out, mt };
      },
      { url: gguf.url, threads, runs: RUNS, tokens: TOKENS, prompt: PROMPT, lib: "/vendor/wllama/index.js" },
    );
    rows.push({ what: `tab (wllama, CPU, ${threads} ${threads === 1 ? "thread" : "threads"}${threads > 1 && !result.mt ? " asked, 1 ran" : ""})`, ttftMs: median(result.out.map((r) => r.first)), tps: median(result.out.map((r) => r.tps)) });
    await page.close();
  }
  // llama-server on the same file.
  for (const threads of [1, 2]) {
    const llama = await startLlamaServer({ model, parallel: 1, threads, ctx: 1024 });
    const out = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const res = await fetch(`${llama.url}/completion`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ prompt: PROMPT, n_predict: TOKENS, ignore_eos: true, temperature: 0, stream: true, cache_prompt: false }) });
      const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
      const decoder = new TextDecoder();
      let raw = "", first = 0;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        raw += decoder.decode(value, { stream: true });
        if (!first && raw.includes('"content":"')) first = performance.now() - t0;
      }
      const timings = [...raw.matchAll(/"predicted_per_second":([\d.e+-]+)/g)].at(-1);
      out.push({ first, tps: Number(timings?.[1]) });
    }
    await llama.stop();
    rows.push({ what: `llama-server (${threads} ${threads === 1 ? "thread" : "threads"})`, ttftMs: median(out.map((r) => r.first)), tps: median(out.map((r) => r.tps)) });
  }
  // The relay: the tab serves through the Worker (the page's own link), the box down.
  const page = await browser.newPage();
  await page.goto(`${proxy.url}/#serve=${TOKEN}&model=${MODEL}&start=1`);
  await page.waitForSelector("#serve-status:has-text('Serving')", { timeout: 120_000 });
  const gaps = [], engine = [], firsts = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: PROMPT }], max_tokens: TOKENS, ignore_eos: true, temperature: 0, stream: true, stream_options: { include_usage: true } }) });
    const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
    const decoder = new TextDecoder();
    let raw = "", last = 0;
    /** @type {number[]} */
    const mine = [];
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      raw += text;
      const now = performance.now();
      if (text.includes('"content":"')) {
        if (last) mine.push(now - last);
        else firsts.push(now - t0);
        last = now;
      }
    }
    const perToken = [...raw.matchAll(/"predicted_ms":([\d.e+-]+),"predicted_per_second":([\d.e+-]+)|"predicted_per_second":([\d.e+-]+)/g)].at(-1);
    const tps = Number(perToken?.[2] ?? perToken?.[3]);
    if (Number.isFinite(tps) && tps > 0) engine.push(1000 / tps);
    gaps.push(median(mine));
  }
  const relay = { gapMs: median(gaps), engineMs: median(engine), firstMs: median(firsts) };
  const lines = [
    START,
    "",
    `The project's tiny test GGUF (${MODEL}), ${TOKENS} tokens from the same prompt (\`ignore_eos\`), median of ${RUNS} runs, on this machine (load ${loadavg()[0].toFixed(1)} on ${availableParallelism()} shared cores). The tab is wllama 3.8.1 in headless Chromium on the CPU (SwiftShader has no shader-f16).`,
    "",
    "| engine | tokens/s | time to first token (ms) |",
    "|---|---|---|",
    ...rows.map((r) => `| ${r.what} | ${f1(r.tps)} | ${f1(r.ttftMs)} |`),
    "",
    `Through the relay (npm start → Worker → hub → the tab's WebSocket, the box down): the client's median gap between text chunks ${f1(relay.gapMs)} ms against the engine's own ${f1(relay.engineMs)} ms a token (its timings), so the relay adds ${f1(relay.gapMs - relay.engineMs)} ms a token; first text ${f1(relay.firstMs)} ms after the request.`,
    "",
    `\`npx node bench/tab-vs-server.mjs --runs ${RUNS} --tokens ${TOKENS}\`, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC.`,
    "",
    END,
  ];
  console.log(lines.join("\n"));
  if (flags.write) {
    writeFileSync(flags.write, replaceMarkedBlock(readFileSync(flags.write, "utf8"), START, END, lines.join("\n"), HEADING));
  }
} finally {
  await browser.close();
  await proxy.stop();
  gguf.close();
}
