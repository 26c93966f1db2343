#!/usr/bin/env node
// Issue 41: the window check over mixed prompt sizes. Three real llama-servers of the tiny test model
// with different windows (`-np 1 -c 512 / 1024 / 2048 -t 1 --poll 0`), each behind a recorder
// (test/support/http-tap.mjs) that sees every request reaching it, one model over the three in
// Switchyard (`wrangler dev`, `balance: "ordered"`, the smallest window first). First a burst of tiny
// prompts (what taught the old tokens-per-character ratio its threefold overestimate), then prompts
// of tens to thousands of tokens in a fixed shuffled order. Each prompt's truth is the servers' own
// count (/apply-template then /tokenize). Counted:
//   - refused but fits: `400 context_length_exceeded` for a prompt that fits some server's window;
//   - sent where it cannot fit: a chat request reaching a server whose window it does not fit;
//   - not answered where it fits: anything but 200 for a prompt that fits some window.
//
//   flock /tmp/sy-servers.lock npx node bench/context-fit.mjs [--rounds 3]
//
// Bounded: rounds × 16 prompts, 8 tokens of answer each (a literal grammar); loopback only; stops
// its servers and Switchyard at the end. About a minute.
import { parseArgs } from "node:util";
import { startLlamaServer, literalGrammar } from "../test/support/llama-server.mjs";
import { startSwitchyard, readSse } from "../test/support/switchyard-dev.mjs";
import { startTap } from "../test/support/http-tap.mjs";

const { values: flags } = parseArgs({ strict: true, options: { rounds: { type: "string", default: "3" } } });
const rounds = Math.max(1, Math.min(20, Number(flags.rounds) || 3));
const WINDOWS = [512, 1024, 2048];

const servers = await Promise.all(WINDOWS.map((ctx) => startLlamaServer({ parallel: 1, ctx, threads: 1, args: ["--poll", "0"] })));
const taps = await Promise.all(servers.map((s) => startTap(s.url)));
const proxy = await startSwitchyard({
  vars: { SWITCHYARD_CONFIG: { models: { m: { targets: taps.map((t) => ({ kind: "llama", url: t.url })), balance: "ordered" } }, health: { sampleMs: 250 } } },
});

/** @typedef {Array<{ role: string, content: string }>} Messages */

/**
 * The servers' own count of a chat prompt (all three run the same model and template).
 * @param {Messages} messages
 */
async function truth(messages) {
  const base = servers[0].url;
  const { prompt } = /** @type {{ prompt: string }} */ (await (await fetch(`${base}/apply-template`, { method: "POST", body: JSON.stringify({ messages }) })).json());
  const { tokens } = /** @type {{ tokens: unknown[] }} */ (await (await fetch(`${base}/tokenize`, { method: "POST", body: JSON.stringify({ content: prompt, add_special: true }) })).json());
  return tokens.length;
}

const TEXTS = ["lorem ipsum dolor sit amet ", "The quick brown fox jumps over the lazy dog. ", "function add(a, b) { return a + b; }\n", "Die Katze schläft auf dem warmen Sofa. "];
// Sizes from a few words to over the largest window; near each window more densely.
const REPEATS = [1, 4, 12, 30, 45, 60, 75, 85, 95, 110, 150, 190, 220, 260, 320, 420];

/**
 * @param {Messages} messages
 * @returns {Promise<{ status: number, target?: string, code?: string, message?: string }>}
 */
async function chat(messages) {
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages, stream: true, max_tokens: 8, grammar: literalGrammar("ok") }),
  });
  if (res.status === 200) {
    const { frames } = await readSse(res);
    return { status: 200, target: frames.find((f) => f.x_switchyard)?.x_switchyard?.target ?? "" };
  }
  const body = /** @type {{ error?: { code?: string, message?: string } }} */ (await res.json().catch(() => ({})));
  return { status: res.status, code: body.error?.code, message: body.error?.message };
}

/** @param {Awaited<ReturnType<typeof startTap>>} tap @param {string} marker */
const reached = (tap, marker) => tap.exchanges().filter((e) => e.path?.endsWith("/chat/completions") && e.request.includes(marker));
let seq = 0;
/** @type {Array<{ tokens: number, out: Awaited<ReturnType<typeof chat>>, sentTo: Array<{ window: number, statuses: number[] }> }>} */
const results = [];
try {
  // The burst of tiny prompts: twelve at once, long-ish answers not needed to teach the ratio.
  await Promise.all(Array.from({ length: 12 }, (_, i) => chat([{ role: "user", content: `[[tag${i}]] write the text` }])));
  for (let round = 0; round < rounds; round++) {
    // A fixed shuffle per round (no randomness: runs compare).
    const order = REPEATS.map((r, i) => ({ r, text: TEXTS[(i + round) % TEXTS.length] })).sort((a, b) => ((a.r * 7919 + round * 104729) % 97) - ((b.r * 7919 + round * 104729) % 97));
    for (const { r, text } of order) {
      const marker = `[[p${++seq}]]`;
      const messages = [{ role: "system", content: `${marker} ${text.repeat(r)}` }, { role: "user", content: "answer" }];
      const tokens = await truth(messages);
      const out = await chat(messages);
      const sentTo = taps.map((t, i) => ({ window: WINDOWS[i], hits: reached(t, marker) })).filter((x) => x.hits.length);
      results.push({ tokens, out, sentTo: sentTo.map((x) => ({ window: x.window, statuses: x.hits.map((h) => h.status) })) });
    }
  }
} finally {
  await proxy.stop();
  await Promise.all(taps.map((t) => t.close()));
  await Promise.all(servers.map((s) => s.stop()));
}

const largest = Math.max(...WINDOWS);
/** @param {{ tokens: number }} r */
const fitsSomewhere = (r) => r.tokens < largest;
const refusedButFits = results.filter((r) => fitsSomewhere(r) && r.out.code === "context_length_exceeded");
const sentWhereNot = results.filter((r) => r.sentTo.some((s) => r.tokens >= s.window));
const notServed = results.filter((r) => fitsSomewhere(r) && r.out.status !== 200);
const refusedRight = results.filter((r) => !fitsSomewhere(r) && r.out.code === "context_length_exceeded");
const sizes = results.map((r) => r.tokens).sort((a, b) => a - b);
console.log(JSON.stringify({ prompts: results.length, tokens: { min: sizes[0], max: sizes.at(-1) }, windows: WINDOWS, fitSomewhere: results.filter(fitsSomewhere).length, refusedButFits: refusedButFits.length, sentWhereCannotFit: sentWhereNot.length, fitButNotServed: notServed.length, overEveryWindowRefused: `${refusedRight.length}/${results.length - results.filter(fitsSomewhere).length}` }));
for (const r of [...refusedButFits, ...sentWhereNot, ...notServed]) console.log(JSON.stringify(r));
if (refusedButFits.length || sentWhereNot.length || notServed.length) process.exitCode = 1;
