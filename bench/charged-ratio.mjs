#!/usr/bin/env node
// The largest generated-to-charged token ratio one key can reach (issue 40: it must be 1). Each
// generating door (chat, completions, Responses, Messages, embeddings) is sent plain and with
// llama-server's own work multipliers (n_cmpl, n on the doors that convert, n_probs, id_slot, …);
// what llama-server really did is read from its own /metrics (tokens_predicted_total and
// prompt_tokens_total, before and after) and compared with what the key was charged (GET /v1/usage).
// Answers the server's chat parser refuses are provoked on purpose (a third server with gpt-oss's
// harmony template, and a grammar that makes the model write what that parser refuses): answered
// from the raw text, replayed raw after reasoning, or continued after text; each is a row of its own.
// Runs the Worker with wrangler's unstable_startWorker (real workerd, no file watching) against three
// local llama-servers (chat with 4 slots; embeddings; harmony), loopback only, one request at a time.
//   node bench/charged-ratio.mjs
import { join } from "node:path";
import { unstable_startWorker } from "wrangler";
import { llamaCache } from "../scripts/llama-cache.mjs";
import { literalGrammar, startLlamaServer } from "../test/support/llama-server.mjs";

const ADMIN_TOKEN = "bench-admin-" + Math.random().toString(36).slice(2);
const messages = [{ role: "user", content: "Count from one to one hundred." }];
// ignore_eos: every completion runs to its bound, so a multiplier shows in full.
const MAX = 80;

// What the harmony template's parser refuses: plain text (nothing is sent: the raw text answers);
// reasoning, then plain text (the reasoning is sent, then the answer is replayed raw). Text refused
// after text was sent comes from free sampling (a stray byte now and then): FREE runs of it.
const REFUSED = {
  plain: literalGrammar("Hello there, this is plain text without any harmony markup at all."),
  reasoning: literalGrammar("<|channel|>analysis<|message|>Let me think it over first.<|end|>Then the plain answer."),
};
const readFile = { type: "function", function: { name: "read_file", parameters: { type: "object", properties: { filepath: { type: "string" } }, required: ["filepath"] } } };
const FREE = 40;

/**
 * @typedef {{ name: string, path: string, body: Record<string, unknown>, server: "chat" | "embed" | "harmony" }} Case
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
  { name: "chat, refused, raw text", path: "/v1/chat/completions", body: { model: "harmony", messages, max_tokens: MAX, grammar: REFUSED.plain }, server: "harmony" },
  { name: "chat stream, refused, raw text", path: "/v1/chat/completions", body: { model: "harmony", messages, max_tokens: MAX, grammar: REFUSED.plain, stream: true }, server: "harmony" },
  { name: "chat, refused after reasoning, replayed raw", path: "/v1/chat/completions", body: { model: "harmony", messages, max_tokens: MAX, grammar: REFUSED.reasoning }, server: "harmony" },
  { name: "chat, refused, ignore_eos", path: "/v1/chat/completions", body: { model: "harmony", messages, max_tokens: MAX, ignore_eos: true }, server: "harmony" },
  { name: "responses, refused after reasoning", path: "/v1/responses", body: { model: "harmony", input: "Count.", max_output_tokens: MAX, grammar: REFUSED.reasoning, store: false }, server: "harmony" },
  { name: "messages, refused after reasoning", path: "/v1/messages", body: { model: "harmony", messages, max_tokens: MAX, grammar: REFUSED.reasoning }, server: "harmony" },
  { name: "completions (no chat parser)", path: "/v1/completions", body: { model: "harmony", prompt: "One, two,", max_tokens: MAX, grammar: REFUSED.plain }, server: "harmony" },
  ...Array.from({ length: FREE }, (_, i) => ({
    name: `chat, sampled freely #${i + 1}`,
    path: "/v1/chat/completions",
    body: { model: "chat", messages: [{ role: "user", content: "Say something." }], tools: [readFile], max_tokens: 8, stream: true },
    server: /** @type {const} */ ("chat"),
  })),
];

/**
 * A chat stream as the fields the table reads: its x_switchyard (last chunk) and its error, if any.
 * @param {string} text
 */
function streamedBody(text) {
  /** @type {any} */
  const out = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    const frame = JSON.parse(line.slice(6));
    if (frame.x_switchyard) out.x_switchyard = frame.x_switchyard;
    if (frame.error) out.error = frame.error;
  }
  return out;
}

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
const [chat, embed, harmony] = await Promise.all([
  startLlamaServer({ parallel: 4, args: threads }),
  startLlamaServer({ parallel: 1, args: [...threads, "--embeddings", "--pooling", "mean"] }),
  startLlamaServer({ parallel: 1, args: [...threads, "--jinja", "--chat-template-file", join(llamaCache().templates, "openai-gpt-oss-120b.jinja")] }),
]);
const servers = { chat: chat.url, embed: embed.url, harmony: harmony.url };
const config = {
  models: {
    chat: { targets: [{ kind: "llama", url: chat.url }] },
    embed: { targets: [{ kind: "llama", url: embed.url }] },
    harmony: { targets: [{ kind: "llama", url: harmony.url }] },
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
    const body = /** @type {any} */ (c.body.stream ? streamedBody(await res.text()) : await res.json().catch(() => ({})));
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
  await Promise.all([chat.stop(), embed.stop(), harmony.stop()]);
}

/** Generated (or, for embeddings, processed) over charged; 1 when both are 0 (nothing ran, nothing charged). */
const ratio = (/** @type {number} */ done, /** @type {number} */ charged) => (done === 0 ? (charged === 0 ? 1 : 0) : charged === 0 ? Infinity : done / charged);
// The free-sampling runs that were not refused are one row; each refused one is a row of its own.
const free = rows.filter((r) => r.name.startsWith("chat, sampled freely") && r.resumes === 0 && Number(r.attempts) <= 1);
const shown = rows.filter((r) => !free.includes(r));
if (free.length) {
  const sum = (/** @type {(r: typeof rows[0]) => number} */ f) => free.reduce((n, r) => n + f(r), 0);
  shown.push({ name: `chat, sampled freely, not refused (${free.length} of ${FREE}, summed)`, status: 200, code: "", generated: sum((r) => r.generated), prompt: sum((r) => r.prompt), charged: sum((r) => r.charged), chargedPrompt: sum((r) => r.chargedPrompt), attempts: "1", resumes: 0 });
}
const lines = shown.map((r) => {
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
// An answer a server's chat parser refused (resumed, replayed or answered from its raw text: more
// than one attempt) is charged the refused attempt's bound on top of what followed.
const refused = rows.filter((r) => r.resumes > 0 || Number(r.attempts) > 1);
const worstRefused = refused.length ? Math.max(...refused.map((r) => ratio(r.generated, r.charged))) : NaN;
const overcharge = refused.reduce((n, r) => n + r.charged - r.generated, 0);
console.log(
  `\nlargest generated-to-charged ratio: ${worst.toFixed(2)}; on the ${refused.length} refused answers: ${worstRefused.toFixed(2)}, overcharged ${overcharge} tokens in all (max_tokens ${MAX}; prompt processed is less than charged when the slot's cache held the prompt)`,
);
