#!/usr/bin/env node
// What a hostile input costs the Worker against a normal input of the same size (issue 26: no more
// than about twice). The Worker as deployed (`wrangler deploy --dry-run`) in one Miniflare; its
// workerd CPU per request (the process's threads' schedstat, bench/overhead/workerd-cpu.mjs), client
// and upstream excluded. Two paths, side by side in one run:
//   rewrite  POST /v1/tool_calls/rewrite with the text: the hostile families of the adversarial suite
//            (test/unit/adversarial/hostile-text.ts: each family after every marker the rewriter reads,
//            screened at --screen-kb, the worst marker measured at --kb), the issue's findings and
//            marker-free floods; against a plain answer and a normal tool call of the same size.
//   chat     a streamed chat completion in prompt mode whose model (the fixture upstream) writes the text
//            in 16-character frames, for the findings and floods, at --chat-kb.
// Ratios are CPU per KB of the input over the normal input's (the dearer of the two normals).
// --rev measures the Worker of a git revision instead of the working tree (the inputs stay this tree's).
//   npx node bench/hostile-inputs.mjs [--kb 128] [--chat-kb 64] [--screen-kb 16] [--repeats 3] [--no-screen] [--no-chat] [--rev <rev>]
// Run it under the shared lock on a shared machine: flock /tmp/sy-servers.lock npx node bench/hostile-inputs.mjs
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { post } from "./overhead/client.mjs";
import { buildWorker, checkoutRevision, miniflareSwitchyard } from "./overhead/runtimes.mjs";
import { cpuNs, workerdPids } from "./overhead/workerd-cpu.mjs";
import { loadBundle } from "./toolcalls/build-engine.mjs";
import { startFixtureUpstream } from "../test/support/fixture-upstream.mjs";

const ROOT = resolve(import.meta.dirname, "..");
const { values: flags } = parseArgs({
  options: {
    kb: { type: "string", default: "128" },
    "chat-kb": { type: "string", default: "64" },
    "screen-kb": { type: "string", default: "16" },
    repeats: { type: "string", default: "3" },
    "no-screen": { type: "boolean", default: false },
    "no-chat": { type: "boolean", default: false },
    rev: { type: "string" },
  },
});
const KB = Number(flags.kb);
const CHAT_KB = Number(flags["chat-kb"]);
const SCREEN_KB = Number(flags["screen-kb"]);
const REPEATS = Number(flags.repeats);

/** @typedef {[head: string, unit: string, tail: string]} Pieces */
/**
 * @typedef {{ ALL_MARKERS: string[], FAMILIES: Record<string, (marker: string, chars: number) => string>,
 *   NORMAL_ANSWER: Pieces, NORMAL_CALL: Pieces, flood: (head: string, unit: string, chars: number, tail?: string) => string }} HostileText
 */
const H = /** @type {HostileText} */ (await loadBundle(ROOT, "test/unit/adversarial/hostile-text.ts"));

const TOOLS = [
  { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" } }, required: ["city"] } } },
  { type: "function", function: { name: "get_time", parameters: { type: "object", properties: { tz: { type: "string" } }, required: ["tz"] } } },
];

/** Inputs named by what they attack, as [head, unit, tail]: the issue's findings first, then floods. */
/** @type {Record<string, Pieces>} */
const NAMED = {
  "[TOOL_CALLS]f + spaces + x (finding 1)": ["[TOOL_CALLS]f", " ", "x"],
  "<tool_call>f + <arg_key>a</arg_key>… (finding 3)": ["<tool_call>f", "<arg_key>a</arg_key>", ""],
  "<tool_call> + <function=a>… (finding 3)": ["<tool_call>", "<function=a>", ""],
  "{ + spaces (finding 5)": ["{", " ", "x"],
  "spaces": ["", " ", ""],
  "[[[[…": ["", "[", ""],
  "{{{{…": ["", "{", ""],
  "deep JSON arguments": ['<tool_call>{"name": "get_weather", "arguments": ', '{"a":', ""],
  "a huge key": ['<tool_call>{"name": "get_weather", "arguments": {"', "k", '": 1}}</tool_call>'],
  "many calls": ["", '<tool_call>{"name": "get_weather", "arguments": {"city": "P"}}</tool_call>\n', ""],
  "a huge near-miss name": ['<tool_call>{"name": "get_weathe', "r", '", "arguments": {}}</tool_call>'],
};

const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

const checkout = flags.rev ? checkoutRevision(flags.rev) : null;
const build = buildWorker(checkout?.dir);
console.log(`The Worker of ${flags.rev ?? "the working tree"}; workerd CPU per request, median of ${REPEATS}.`);
const fixture = await startFixtureUpstream();
const config = { models: { m: { targets: [{ kind: "llama", url: `${fixture.url}/behave/say-repeat`, tools: "prompt" }] } } };
const before = workerdPids();
const mf = await miniflareSwitchyard(build.script, { SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify(config) });
const pids = [...workerdPids()].filter((p) => !before.has(p));
if (!pids.length) throw new Error("could not find the workerd process");
const cpu = () => pids.reduce((sum, pid) => sum + cpuNs(pid), 0);

/**
 * The median workerd CPU (ms) of `repeats` runs of one request, after a warm-up.
 * @param {string} path
 * @param {Record<string, unknown>} body
 */
async function cpuMs(path, body, repeats = REPEATS) {
  const times = [];
  for (let i = -1; i < repeats; i++) {
    const t0 = cpu();
    const r = await post(`${mf.url}${path}`, body, { timeoutMs: 600_000 });
    if (r.status >= 500 || r.status === 0) throw new Error(`${path}: ${r.status} ${r.text.slice(0, 300)}`);
    if (i >= 0) times.push((cpu() - t0) / 1e6);
  }
  return median(times);
}

const rewrite = (/** @type {string} */ text, repeats = REPEATS) => cpuMs("/v1/tool_calls/rewrite", { tools: TOOLS, text }, repeats);
/** A streamed prompt-mode chat whose model writes head + unit… + tail, about `chars` long. */
const chat = (/** @type {Pieces} */ [head, unit, tail], /** @type {number} */ chars) => {
  const times = Math.max(1, Math.ceil((chars - head.length - tail.length) / unit.length));
  const spec = { parts: [[head, 1], [unit, times], [tail, 1]], frame: 16 };
  return cpuMs("/v1/chat/completions", { model: "m", stream: true, tools: TOOLS, messages: [{ role: "user", content: JSON.stringify(spec) }] });
};
const text = (/** @type {Pieces} */ [head, unit, tail], /** @type {number} */ chars) => H.flood(head, unit, chars, tail);

/** @type {Array<{ path: string, family: string, input: string, kb: number, ms: number, ratio: number }>} */
const rows = [];
const fmt = (/** @type {number} */ x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

try {
  // ---- rewrite ----
  const chars = KB * 1000;
  const normalAnswer = await rewrite(text(H.NORMAL_ANSWER, chars));
  const normalCall = await rewrite(text(H.NORMAL_CALL, chars));
  const normal = Math.max(normalAnswer, normalCall) / KB;
  console.log(`rewrite, ${KB} KB: a plain answer ${fmt(normalAnswer)} ms (${fmt(normalAnswer / KB)} ms/KB), a normal call ${fmt(normalCall)} ms (${fmt(normalCall / KB)} ms/KB)`);
  const add = (/** @type {string} */ path, /** @type {string} */ family, /** @type {string} */ input, /** @type {number} */ kb, /** @type {number} */ ms, /** @type {number} */ normalPerKb) => {
    rows.push({ path, family, input, kb, ms, ratio: ms / kb / normalPerKb });
    console.log(`  ${path} | ${family} | ${input} | ${kb} KB | ${fmt(ms)} ms | ×${(ms / kb / normalPerKb).toFixed(2)}`);
  };
  for (const [name, pieces] of Object.entries(NAMED)) add("rewrite", name, "", KB, await rewrite(text(pieces, chars)), normal);
  if (!flags["no-screen"]) {
    for (const [family, make] of Object.entries(H.FAMILIES)) {
      let worst = { marker: "", ms: -1 };
      for (const marker of H.ALL_MARKERS) {
        const ms = await rewrite(make(marker, SCREEN_KB * 1000), 1);
        if (ms > worst.ms) worst = { marker, ms };
      }
      add("rewrite", `marker ${family}`, JSON.stringify(worst.marker), KB, await rewrite(make(worst.marker, chars)), normal);
    }
  }
  // A client's regex against a model's near-miss key (28 characters): against the same call with an
  // ordinary pattern (the normal input of its size: a schema with a pattern), and without any.
  const key = `${"a".repeat(28)}!`;
  const call = `<tool_call>{"name": "f", "arguments": {"${key}": 1}}</tool_call>`;
  const withPattern = (/** @type {string} */ re) => ({ tools: [{ type: "function", function: { name: "f", parameters: { type: "object", patternProperties: { [re]: {} } } } }], text: call });
  const plain = await cpuMs("/v1/tool_calls/rewrite", { tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }], text: call });
  const ordinary = await cpuMs("/v1/tool_calls/rewrite", withPattern("^[a-z_]+$"));
  console.log(`  rewrite | the same call: ${fmt(plain)} ms without a pattern, ${fmt(ordinary)} ms with an ordinary one (^[a-z_]+$)`);
  for (const re of ["^(a+)+$", "(a|a)*b"]) {
    const ms = await cpuMs("/v1/tool_calls/rewrite", withPattern(re));
    rows.push({ path: "rewrite", family: `patternProperties ${re}, a 29-character near-miss key (against ^[a-z_]+$; ×${(ms / plain).toFixed(2)} the call without a pattern)`, input: "", kb: call.length / 1000, ms, ratio: ms / ordinary });
    console.log(`  rewrite | patternProperties ${re} | ${fmt(ms)} ms against ${fmt(ordinary)} ms with an ordinary pattern, ${fmt(plain)} ms without | ×${(ms / ordinary).toFixed(2)}`);
  }

  // ---- chat, prompt mode, streamed ----
  if (!flags["no-chat"]) {
    const chatChars = CHAT_KB * 1000;
    const answer = await chat(H.NORMAL_ANSWER, chatChars);
    const callMs = await chat(H.NORMAL_CALL, chatChars);
    const chatNormal = Math.max(answer, callMs) / CHAT_KB;
    console.log(`chat (prompt mode, stream, 16-character frames), ${CHAT_KB} KB: a plain answer ${fmt(answer)} ms, a normal call ${fmt(callMs)} ms`);
    for (const [name, pieces] of Object.entries(NAMED)) add("chat", name, "", CHAT_KB, await chat(pieces, chatChars), chatNormal);
  }
} finally {
  await mf.stop();
  await fixture.close();
  build.cleanup();
  checkout?.cleanup();
}

console.log("\n| path | family | worst input | size | workerd CPU | × normal per KB |\n|---|---|---|---|---|---|");
for (const r of rows) console.log(`| ${r.path} | ${r.family.replace(/\|/g, "\\|")} | ${r.input.replace(/\|/g, "\\|")} | ${r.kb >= 1 ? `${r.kb} KB` : `${Math.round(r.kb * 1000)} B`} | ${fmt(r.ms)} ms | ${r.ratio.toFixed(2)} |`);
const over = rows.filter((r) => r.ratio > 2);
console.log(`\n${over.length} of ${rows.length} inputs cost more than twice a normal input per KB.`);
