#!/usr/bin/env node
// The largest generated-to-charged token ratio one key can reach (issue 40: it must be 1). Each
// generating door (chat, completions, Responses, Messages, embeddings) is sent plain and with
// llama-server's own work multipliers (n_cmpl, n on the doors that convert, n_probs, id_slot, …);
// what llama-server really did is read from its own /metrics (tokens_predicted_total and
// prompt_tokens_total, before and after) and compared with what the key was charged (GET /v1/usage).
// Runs the Worker with wrangler's unstable_startWorker (real workerd, no file watching) against two
// local llama-servers (chat with 4 slots; embeddings), loopback only, one request at a time.
//   node bench/charged-ratio.mjs
import { unstable_startWorker } from "wrangler";
import { startLlamaServer } from "../test/support/llama-server.mjs";

const ADMIN_TOKEN = "bench-admin-" + Math.random().toString(36).slice(2);
const messages = [{ role: "user", content: "Count from one to one hundred." }];
// ignore_eos: every completion runs to its bound, so a multiplier shows in full.
const MAX = 80;

/**
 * @typedef {{ name: string, path: string, body: Record<string, unknown>, server: "chat" | "embed" }} Case
 */
/** @type {Case[]} */
const CASES = [
  { name: "chat", path: "/v1/chat/completions", body: { model: "chat", messages, max_tokens: MAX, ignore_eos: true }, server: "chat" },
  { name: "chat + n_cmpl 4", path: "/v1/chat/completions", body: { model: "chat", messages, max_tokens: MAX, ignore_eos: true, n_cmpl: 4 }, server: "chat" },
  { name: "chat + n 4", path: "/v1/chat/completions", body: { model: "chat", messages, max_tokens: MAX, ignore_eos: true, n: 4 }, server: "chat" },
  { name: "chat + n_probs 1000", path: "/v1/chat/completions", body: { model: "chat", messages, max_tokens: MAX, ignore_eos: true, n_probs: 1000 }, server: "chat" },
  { name: "chat + id_slot 0", path: "/v1/chat/completions", body: { model: "chat", messages, max_tokens: MAX, ignore_eos: true, id_slot: 0 }, server: "chat" },
  { name: "chat + samplers ×100", path: "/v1/chat/completions", body: { model: "chat", messages, max_tokens: MAX, ignore_eos: true, samplers: Array(100).fill("top_k") }, server: "chat" },
  { name: "chat, no max_tokens (key's default)", path: "/v1/chat/completions", body: { model: "chat", messages, ignore_eos: true, n_predict: -1 }, server: "chat" },
  { name: "completions", path: "/v1/completions", body: { model: "chat", prompt: "One, two,", max_tokens: MAX, ignore_eos: true }, server: "chat" },
  { name: "completions + n_cmpl 4", path: "/v1/completions", body: { model: "chat", prompt: "One, two,", max_tokens: MAX, ignore_eos: true, n_cmpl: 4 }, server: "chat" },
  { name: "responses", path: "/v1/responses", body: { model: "chat", input: "Count.", max_output_tokens: MAX, ignore_eos: true, store: false }, server: "chat" },
  { name: "responses + n_cmpl 4", path: "/v1/responses", body: { model: "chat", input: "Count.", max_output_tokens: MAX, ignore_eos: true, store: false, n_cmpl: 4 }, server: "chat" },
  { name: "responses + n 4", path: "/v1/responses", body: { model: "chat", input: "Count.", max_output_tokens: MAX, ignore_eos: true, store: false, n: 4 }, server: "chat" },
  { name: "messages", path: "/v1/messages", body: { model: "chat", messages, max_tokens: MAX, ignore_eos: true }, server: "chat" },
  { name: "messages + n_cmpl 4", path: "/v1/messages", body: { model: "chat", messages, max_tokens: MAX, ignore_eos: true, n_cmpl: 4 }, server: "chat" },
  { name: "messages + n 4", path: "/v1/messages", body: { model: "chat", messages, max_tokens: MAX, ignore_eos: true, n: 4 }, server: "chat" },
  { name: "embeddings, 3 inputs", path: "/v1/embeddings", body: { model: "embed", input: ["one two three", "four five six seven", "eight"] }, server: "embed" },
];

/**
 * llama-server's own counters: tokens generated and prompt tokens processed, over its life.
 * @param {string} url
 */
async function counters(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  /** @param {string} name */
  const read = (name) => Number(new RegExp(`^llamacpp:${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);
  return { generated: read("tokens_predicted_total"), prompt: read("prompt_tokens_total") };
}

/**
 * Waits until the server has no request in flight (its counters count finished tasks).
 * @param {string} url
 */
async function idle(url) {
  for (let i = 0; i < 200; i++) {
    const slots = /** @type {Array<{ is_processing: boolean }>} */ (await (await fetch(`${url}/slots`)).json());
    if (slots.every((s) => !s.is_processing)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} stayed busy`);
}

const threads = ["-t", "1", "-tb", "1", "--poll", "0", "--metrics"];
const [chat, embed] = await Promise.all([
  startLlamaServer({ parallel: 4, args: threads }),
  startLlamaServer({ parallel: 1, args: [...threads, "--embeddings", "--pooling", "mean"] }),
]);
const servers = { chat: chat.url, embed: embed.url };
const config = {
  models: {
    chat: { targets: [{ kind: "llama", url: chat.url }] },
    embed: { targets: [{ kind: "llama", url: embed.url }] },
  },
};
const vars = { SWITCHYARD_ENV: "dev", ADMIN_TOKEN, SWITCHYARD_CONFIG: JSON.stringify(config), KEY_STORE_NAME: `bench-ratio-${Date.now()}` };
const worker = await unstable_startWorker({
  config: "wrangler.toml",
  bindings: Object.fromEntries(Object.entries(vars).map(([k, value]) => [k, { type: "plain_text", value }])),
  dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: false, watch: false, logLevel: "warn" },
});

/** @type {Array<{ name: string, status: number, code: string, generated: number, prompt: number, charged: number, chargedPrompt: number, attempts: string, resumes: number }>} */
const rows = [];
try {
  await worker.ready;
  const base = (await worker.url).origin;
  const json = (/** @type {string | null} */ key) => ({ "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) });
  for (const [i, c] of CASES.entries()) {
    // A key of its own per case (its usage is that case's charge), with a day limit (so the meter
    // bounds and reserves) far above what any case uses.
    const created = await fetch(`${base}/v1/admin/keys`, { method: "POST", headers: json(ADMIN_TOKEN), body: JSON.stringify({ name: `case-${i}`, scopes: ["chat"], limits: { tokensPerDay: 1_000_000, defaultMaxTokens: MAX } }) });
    const { key } = /** @type {{ key: string }} */ (await created.json());
    const url = servers[c.server];
    await idle(url);
    const before = await counters(url);
    const res = await fetch(`${base}${c.path}`, { method: "POST", headers: json(key), body: JSON.stringify(c.body) });
    const body = /** @type {any} */ (await res.json().catch(() => ({})));
    await idle(url);
    const after = await counters(url);
    // The charge lands with waitUntil once the answer ended: read until it is there (or 2 s).
    let totals = { prompt_tokens: 0, completion_tokens: 0, requests: 0 };
    for (let t = 0; t < 40; t++) {
      const usage = /** @type {any} */ (await (await fetch(`${base}/v1/usage`, { headers: json(key) })).json());
      totals = usage.totals;
      if (totals.requests > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    rows.push({
      name: c.name,
      status: res.status,
      code: res.ok ? "" : String(body?.error?.code ?? body?.error?.type ?? ""),
      generated: after.generated - before.generated,
      prompt: after.prompt - before.prompt,
      charged: totals.completion_tokens,
      chargedPrompt: totals.prompt_tokens,
      attempts: res.headers.get("x-switchyard-attempts") ?? String(body?.x_switchyard?.attempts ?? body?.error?.x_switchyard?.attempts ?? ""),
      resumes: Array.isArray(body?.x_switchyard?.resumes) ? body.x_switchyard.resumes.length : 0,
    });
  }
} finally {
  await worker.dispose();
  await Promise.all([chat.stop(), embed.stop()]);
}

/** Generated (or, for embeddings, processed) over charged; 1 when both are 0 (nothing ran, nothing charged). */
const ratio = (/** @type {number} */ done, /** @type {number} */ charged) => (done === 0 ? (charged === 0 ? 1 : 0) : charged === 0 ? Infinity : done / charged);
const lines = rows.map((r) => {
  const gen = ratio(r.generated, r.charged);
  return `| ${r.name} | ${r.status}${r.code ? ` ${r.code}` : ""} | ${r.attempts}${r.resumes ? ` (${r.resumes} resumed)` : ""} | ${r.generated} | ${r.charged} | ${gen.toFixed(2)} | ${r.prompt} | ${r.chargedPrompt} |`;
});
const worst = Math.max(...rows.map((r) => ratio(r.generated, r.charged)));
console.log(
  [
    "| case | status | attempts | generated (llama-server) | completion charged | generated ÷ charged | prompt processed (llama-server) | prompt charged |",
    "|---|---|---|---|---|---|---|---|",
    ...lines,
  ].join("\n"),
);
// An answer Switchyard resumed (its chat parser refused the random model's text mid-answer, and the
// same server continued it) is charged what was delivered, not what the refused attempt generated.
const unresumed = Math.max(...rows.filter((r) => r.resumes === 0).map((r) => ratio(r.generated, r.charged)));
console.log(`\nlargest generated-to-charged ratio: ${worst.toFixed(2)}; without resumed answers: ${unresumed.toFixed(2)} (max_tokens ${MAX}, ignore_eos; prompt processed is less than charged when the slot's cache held the prompt)`);
