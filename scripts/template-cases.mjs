#!/usr/bin/env node
// Regenerates test/fixtures/template-cases.json: cases for the chat templates llama.cpp ships without a
// test-chat case. Each input is what the template itself writes for an assistant message (rendered
// with llama.cpp's own jinja, after the generation prompt, without the end-of-turn token), or, where
// a template cannot show what its model writes (content before calls, reasoning it does not render),
// a hand-written output in the template's format. `llama` records what llama.cpp's own parser makes of
// each input; `expect` is the message the input was rendered from.
//
//   node scripts/template-cases.mjs      (builds test-chat once via scripts/llama-chat-fixtures.mjs' cache)
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildTestChat, cacheRoot } from "./llama-chat-fixtures.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const { src } = buildTestChat();
const renderer = join(cacheRoot(), "render-template");
if (!existsSync(renderer)) {
  const b = join(src, "build");
  const libs = ["common/libllama-common.a", "common/libllama-common-base.a", "src/libllama.a", "ggml/src/libggml.a", "ggml/src/libggml-cpu.a", "ggml/src/libggml-base.a", "vendor/hash/libvendor-hash.a"];
  const r = spawnSync("c++", [
    "-std=c++17", "-O1", "-I", join(src, "common"), "-I", join(src, "include"), "-I", join(src, "ggml/include"), "-I", join(src, "vendor"),
    join(here, "template-cases/render-template.cpp"), "-o", renderer, ...libs.map((l) => join(b, l)), "-lpthread", "-fopenmp",
  ], { stdio: "inherit" });
  if (r.status !== 0) throw new Error("compiling render-template failed");
}

/**
 * One case to write: a template's assistant message (`msg`, rendered unless `input` is given) with the
 * tools (keys into tools.json) it is declared with.
 * @typedef {{ type: "function", id: string, function: { name: string, arguments: string } }} Call
 * @typedef {{ content?: string, reasoning_content?: string, tool_calls?: Call[] }} Msg
 * @typedef {{ content: string, reasoning_content: string, tool_calls: Array<{ name: string, arguments: string, id: string }> }} Expect
 * @typedef {{ what?: string, tools: string[], msg: Msg, input?: string, expect?: Expect, kwargs?: Record<string, unknown>,
 *   enable_thinking?: boolean, parallel?: boolean, strip?: string[], generation_prompt?: string }} Spec
 * @typedef {{ prompt: string, error?: string, generation_prompt?: string, parsed?: unknown[] }} Rendered what render-template prints
 */

/** @type {Record<string, unknown>} */
const toolsJson = JSON.parse(readFileSync(join(here, "../test/fixtures/llama-chat/tools.json"), "utf8"));
const T = (/** @type {string[]} */ ...keys) => keys.map((k) => ({ type: "function", function: toolsJson[k] }));
const work = mkdtempSync(join(tmpdir(), "switchyard-template-cases-"));
/**
 * @param {{ template: string } & Record<string, unknown>} req
 * @returns {Rendered}
 */
function run(req) {
  const file = join(work, "req.json");
  writeFileSync(file, JSON.stringify({ ...req, template: join(src, "models/templates", req.template) }));
  return JSON.parse(execFileSync(renderer, [file], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }));
}

const user = { role: "user", content: "Hey there!" };
/**
 * @param {string} name
 * @param {unknown} args
 * @returns {Call}
 */
const call = (name, args) => ({ type: "function", id: "call00001", function: { name, arguments: JSON.stringify(args) } });
const CODE = "import sys\n\ndef main():\n    print(sys.argv[1:])\n\nmain()\n";

// The five shapes every tool-capable template gets.
/** @satisfies {Record<string, Spec>} */
const SHAPES = {
  content: { tools: ["special_function"], msg: { content: "Hello, world!\nWhat's up?" } },
  single: { tools: ["special_function"], msg: { content: "", tool_calls: [call("special_function", { arg1: 1 })] } },
  reasoned: { tools: ["get_time"], msg: { reasoning_content: "The user wants the time in Paris.", content: "Let me check the time.", tool_calls: [call("get_time", { city: "Paris" })] } },
  parallel: { tools: ["get_time", "get_weather"], parallel: true, msg: { content: "", tool_calls: [call("get_time", { city: "Paris" }), { ...call("get_weather", { city: "Paris" }), id: "call00002" }] } },
  code: { tools: ["python"], msg: { content: "", tool_calls: [call("python", { code: CODE })] } },
};

/**
 * @param {Msg} m
 * @returns {Expect}
 */
const expectOf = (m) => ({
  content: m.content ?? "",
  reasoning_content: m.reasoning_content ?? "",
  tool_calls: (m.tool_calls ?? []).map((c) => ({ name: c.function.name, arguments: c.function.arguments, id: "" })),
});

/**
 * What the template writes for `msg` after its generation prompt, without the end-of-turn `strip`.
 * @param {string} template
 * @param {Msg} msg
 * @param {{ kwargs?: Record<string, unknown>, enable_thinking?: boolean, tools: unknown[], strip?: string[] }} options
 */
function render(template, msg, { kwargs, enable_thinking = true, tools, strip = [] }) {
  const base = run({ template, tools, messages: [user], add_generation_prompt: true, enable_thinking, kwargs });
  const full = run({ template, tools, messages: [user, { role: "assistant", ...msg }], add_generation_prompt: false, enable_thinking, kwargs });
  if (full.error) throw new Error(template + ": " + full.error);
  if (!full.prompt.startsWith(base.prompt)) throw new Error(`${template}: render does not continue the generation prompt:\n${JSON.stringify(base.prompt.slice(-80))}\n${JSON.stringify(full.prompt.slice(base.prompt.length - 80))}`);
  let out = full.prompt.slice(base.prompt.length);
  for (const s of strip) if (out.endsWith(s)) { out = out.slice(0, -s.length); break; }
  return out;
}

/** @type {Array<{ template: string } & Record<string, unknown>>} */
const all = [];
/**
 * @param {string} template
 * @param {Spec} spec
 */
function add(template, spec) {
  const file = `models/templates/${template}.jinja`;
  const tools = T(...spec.tools);
  const enable_thinking = spec.enable_thinking ?? true;
  const input = spec.input ?? render(template + ".jinja", spec.msg, { ...spec, tools, enable_thinking });
  const probe = run({ template: template + ".jinja", tools, messages: [user], add_generation_prompt: true, enable_thinking, kwargs: spec.kwargs, parallel_tool_calls: !!spec.parallel, inputs: [input] });
  const expect = spec.expect ?? expectOf(spec.msg);
  const n = all.filter((c) => c.template === file).length + 1;
  const c = {
    id: `${template}#${n}`,
    template: file,
    line: 0,
    format: "from-template",
    input,
    is_partial: false,
    tools: spec.tools,
    tool_choice: "auto",
    parallel_tool_calls: !!spec.parallel,
    json_schema: "",
    reasoning_format: "auto",
    enable_thinking,
    continue_final_message: "none",
    generation_prompt: spec.generation_prompt ?? probe.generation_prompt,
    messages: [],
    expect,
    what: spec.what,
    // What llama.cpp's own parser (derived from the template) makes of the input, for comparison.
    llama: probe.parsed?.[0] ?? { error: probe.error },
  };
  all.push(c);
}

/**
 * Every shape of SHAPES for one template, each changed by its override (null: left out).
 * @param {string} template
 * @param {Partial<Spec>} opts
 * @param {Partial<Record<keyof typeof SHAPES, Partial<Spec> | null>>} [overrides]
 */
function toolTemplate(template, opts, overrides = {}) {
  for (const [what, shape] of /** @type {Array<[keyof typeof SHAPES, Spec]>} */ (Object.entries(SHAPES))) {
    const o = overrides[what];
    if (o === null) continue;
    add(template, { what, ...shape, ...opts, ...(o ?? {}) });
  }
}

// ---- the templates ------------------------------------------------------------------------------------------
const HY = { strip: ["<｜hy_eos:opensource｜>"] };
toolTemplate("tencent-Hy3", HY, { reasoned: { kwargs: { reasoning_effort: "high" } } });
add("tencent-Hy3", { what: "reasoning, then content (reasoning_effort high)", tools: ["special_function"], ...HY, kwargs: { reasoning_effort: "high" }, msg: { reasoning_content: "I'm\nthinking", content: "Hello, world!\nWhat's up?" } });

const LAGUNA = { strip: ["</assistant>\n"] };
for (const t of ["poolside-Laguna-S-2.1", "poolside-Laguna-XS.2", "poolside-Laguna-XS-2.1"]) {
  toolTemplate(t, LAGUNA, {
    content: { enable_thinking: false },
    single: { enable_thinking: false },
    parallel: { enable_thinking: false },
    code: { enable_thinking: false },
  });
  add(t, { what: "reasoning, then content", tools: ["special_function"], ...LAGUNA, msg: { reasoning_content: "I'm\nthinking", content: "Hello, world!\nWhat's up?" } });
}

const IM = { strip: ["<|im_end|>\n"] };
toolTemplate("Bielik-11B-v3.0-Instruct", IM, {
  content: { enable_thinking: false },
  single: { enable_thinking: false },
  parallel: { enable_thinking: false },
  code: { enable_thinking: false },
});
add("Bielik-11B-v3.0-Instruct", { what: "reasoning, then content", tools: ["special_function"], ...IM, msg: { reasoning_content: "I'm\nthinking", content: "Hello, world!\nWhat's up?" } });

toolTemplate("Qwen-Qwen3-0.6B", IM);
add("Qwen-Qwen3-0.6B", { what: "thinking off", tools: ["special_function"], ...IM, enable_thinking: false, msg: { content: "", tool_calls: [call("special_function", { arg1: 1 })] } });

const GEMMA = { strip: ["<turn|>\n"] };
// The template writes a turn's content after its calls; Gemma 4 writes it before them too (llama.cpp's own cases).
toolTemplate("google-gemma-4-31B-it-interleaved", GEMMA, {
  reasoned: { input: '<|channel>thought\nThe user wants the time in Paris.<channel|>Let me check the time.<|tool_call>call:get_time{city:<|"|>Paris<|"|>}<tool_call|>' },
});
add("google-gemma-4-31B-it-interleaved", { what: "content after the call, in the template's order", tools: ["get_time"], ...GEMMA, input: '<|tool_call>call:get_time{city:<|"|>Paris<|"|>}<tool_call|>Let me check the time.', msg: SHAPES.reasoned.msg, expect: { ...expectOf(SHAPES.reasoned.msg), reasoning_content: "" } });
add("google-gemma-4-31B-it-interleaved", { what: "thinking off", tools: ["special_function"], ...GEMMA, enable_thinking: false, input: "<|tool_call>call:special_function{arg1:1}<tool_call|>", msg: { content: "", tool_calls: [call("special_function", { arg1: 1 })] } });

// MiniMax-M1 renders a message with calls as the calls alone, and no reasoning at all; the model writes
// <think>…</think> first (a reasoning model) and may say something before its calls.
const M1 = { strip: ["<end_of_sentence>\n"] };
toolTemplate("MiniMax-M1", M1, {
  reasoned: { input: '<think>\nThe user wants the time in Paris.\n</think>\n\nLet me check the time.\n<tool_calls>\n{"name": "get_time", "arguments": {"city": "Paris"}}\n</tool_calls>' },
});

// Solar Open: after `<|begin|>assistant`, a `<|think|>…<|end|>` message, then `<|begin|>assistant` and either
// `<|content|>…<|end|>` or `<|tool_calls|>` + one `<|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{…}<|tool_call:end|>`
// per call + `<|calls|>`. reasoning_effort low/minimal prefills an empty think message.
const solarCall = (/** @type {string} */ id, /** @type {string} */ name, /** @type {unknown} */ args) => `<|tool_call:begin|>${id}<|tool_call:name|>${name}<|tool_call:args|>${JSON.stringify(args).replace(/":/g, '": ').replace(/,"/g, ', "')}<|tool_call:end|>`;
const LOW = { kwargs: { reasoning_effort: "low" } };
const SOLAR = "upstage-Solar-Open-100B";
const solarGen = (/** @type {number} */ kw) => (kw ? "<|begin|>assistant<|think|><|end|><|begin|>assistant" : "<|begin|>assistant");
add(SOLAR, { what: "content", ...SHAPES.content, ...LOW, generation_prompt: solarGen(1), input: "<|content|>Hello, world!\nWhat's up?" });
add(SOLAR, { what: "single", ...SHAPES.single, ...LOW, generation_prompt: solarGen(1), input: `<|tool_calls|>${solarCall("a1b2c3d4e5", "special_function", { arg1: 1 })}<|calls|>` });
add(SOLAR, { what: "reasoned", ...SHAPES.reasoned, generation_prompt: solarGen(0), input: `<|think|>The user wants the time in Paris.<|end|><|begin|>assistant<|content|>Let me check the time.<|end|><|begin|>assistant<|tool_calls|>${solarCall("k3m9x2p7q1", "get_time", { city: "Paris" })}<|calls|>` });
add(SOLAR, { what: "parallel", ...SHAPES.parallel, ...LOW, generation_prompt: solarGen(1), input: `<|tool_calls|>${solarCall("a1b2c3d4e5", "get_time", { city: "Paris" })}${solarCall("f6g7h8i9j0", "get_weather", { city: "Paris" })}<|calls|>` });
add(SOLAR, { what: "code", ...SHAPES.code, ...LOW, generation_prompt: solarGen(1), input: `<|tool_calls|>${solarCall("a1b2c3d4e5", "python", { code: CODE })}<|calls|>` });
add(SOLAR, { what: "reasoning, then content", tools: ["special_function"], generation_prompt: solarGen(0), input: "<|think|>I'm\nthinking<|end|><|begin|>assistant<|content|>Hello, world!\nWhat's up?", msg: { reasoning_content: "I'm\nthinking", content: "Hello, world!\nWhat's up?" } });
add(SOLAR, { what: "reasoning, then a call ended by end-of-generation (no <|calls|>)", ...SHAPES.single, generation_prompt: solarGen(0), input: `<|think|>I'm\nthinking<|end|><|begin|>assistant<|tool_calls|>${solarCall("a1b2c3d4e5", "special_function", { arg1: 1 })}`, msg: { ...SHAPES.single.msg, reasoning_content: "I'm\nthinking" } });

// No tools in these templates: content (and reasoning) only, with and without tools declared.
const HELLO = { content: "Hello, world!\nWhat's up?" };
add("HuggingFaceTB-SmolLM3-3B", { what: "reasoning, then content", tools: [], input: "<think>\nI'm\nthinking\n</think>\nHello, world!\nWhat's up?", msg: { ...HELLO, reasoning_content: "I'm\nthinking" } });
add("HuggingFaceTB-SmolLM3-3B", { what: "thinking off, tools declared", tools: ["special_function"], enable_thinking: false, input: "Hello, world!\nWhat's up?", msg: HELLO });
add("microsoft-Phi-3.5-mini-instruct", { what: "content", tools: [], input: "Hello, world!\nWhat's up?", msg: HELLO });
add("microsoft-Phi-3.5-mini-instruct", { what: "content, tools declared", tools: ["special_function"], input: "Hello, world!\nWhat's up?", msg: HELLO });
add("llama-cpp-rwkv-world", { what: "reasoning, then content", tools: [], generation_prompt: "Assistant: <think>", input: "\nI'm\nthinking\n</think>\nHello, world!\nWhat's up?", msg: { ...HELLO, reasoning_content: "I'm\nthinking" } });
add("llama-cpp-rwkv-world", { what: "thinking off, tools declared", tools: ["special_function"], enable_thinking: false, generation_prompt: "Assistant: <think>\n</think>", input: "\nHello, world!\nWhat's up?", msg: HELLO });

const out = join(here, "../test/fixtures/template-cases.json");
writeFileSync(out, JSON.stringify(all, null, 1) + "\n");
process.stderr.write(`[template-cases] ${all.length} cases over ${new Set(all.map((c) => c.template)).size} templates → ${out}\n`);
