#!/usr/bin/env node
// Tool-call rewriting benchmark on BFCL (docs/benchmarks.md, "Tool-call rewriting").
//   node bench/toolcalls/run.mjs [--quick] [--json out.json] [--category <one BFCL category>]
// BFCL_DIR overrides the data directory (default: ../shared/data/bfcl from the repo root).
// Tuning categories: simple_python, multiple, parallel. Reported: parallel_multiple, irrelevance.

import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadCategory } from "./bfcl-data.mjs";
import { checkCategory } from "./bfcl-checker.mjs";
import { loadEngine } from "./build-engine.mjs";
import { CORRUPTIONS } from "./corruptions.mjs";
import { proseAnswers } from "./prose.mjs";
import { fromNode, isEmptyString } from "./python-values.mjs";
import { DIALECTS, CLEAN } from "./render-dialects.mjs";
import { measureStreaming } from "./throughput.mjs";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const bfclDir = process.env.BFCL_DIR ?? resolve(repoRoot, "../shared/data/bfcl");
const { values: flags } = parseArgs({ options: { quick: { type: "boolean", default: false }, json: { type: "string" }, category: { type: "string" } } });
const quick = flags.quick;
const jsonOut = flags.json ?? null;
const only = flags.category ?? null;

const engine = await loadEngine(repoRoot);

/**
 * @typedef {import("./python-values.mjs").PyValue} PyValue
 * @typedef {import("./render-dialects.mjs").Call} Call
 * @typedef {import("./bfcl-data.mjs").GorillaFunction} GorillaFunction
 * @typedef {import("./bfcl-data.mjs").GorillaSchema} GorillaSchema
 * @typedef {import("./bfcl-data.mjs").Answer} Answer
 * @typedef {import("./bfcl-data.mjs").Question} Question
 * @typedef {ReturnType<typeof rng>} Rng
 * @typedef {import("../../src/toolcalls/index.ts").RewriteResult} RewriteResult
 */

/** A question's ground truth (possible_answer), which the recovery and ordering checks need. */
function answersOf(/** @type {Question} */ q) {
  if (!q.answers) throw new Error(`${q.category} ${q.id}: no ground truth (possible_answer/BFCL_v4_${q.category}.json) in ${bfclDir}`);
  return q.answers;
}

/** The declaration of `name` among a question's functions (the ground truth only calls those). */
function declared(/** @type {GorillaFunction[]} */ funcs, /** @type {string} */ name) {
  const func = funcs.find((f) => f.name === name);
  if (!func) throw new Error(`the ground truth calls ${name}, which the question does not declare`);
  return func;
}

/** @param {string} seedText */
function rng(seedText) {
  let h = 2166136261;
  for (const c of seedText) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  let a = h >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (/** @type {number} */ n) => Math.floor(next() * n) };
}

// ---- ground truth → one concrete call ---------------------------------------------------------

/**
 * @param {PyValue[]} alternatives
 * @param {Rng} r
 */
function pick(alternatives, r) {
  const usable = alternatives.filter((a) => !isEmptyString(a));
  return usable.length === 0 ? null : usable[r.int(usable.length)];
}

/**
 * A dict parameter's acceptable value is a dict of acceptable-value lists: choose one per key.
 * @param {Extract<PyValue, { t: "dict" }>} d
 * @param {Rng} r
 * @returns {PyValue}
 */
function resolveDict(d, r) {
  /** @type {Map<string, PyValue>} */
  const out = new Map();
  for (const [k, alts] of d.v) {
    const v = alts.t === "list" ? pick(alts.v, r) : alts;
    if (v !== null) out.set(k, v);
  }
  return { t: "dict", v: out };
}

/**
 * @param {Answer} answer
 * @param {GorillaFunction[]} funcs
 * @param {Rng} r
 * @returns {Call}
 */
function concreteCall(answer, funcs, r) {
  const [name, params] = [...answer.entries()][0] ?? [];
  if (name === undefined || !params) throw new Error("a ground-truth call without a function");
  const func = declared(funcs, name);
  const props = func.parameters.properties ?? {};
  const required = new Set(func.parameters.required ?? []);
  /** @type {Call["args"]} */
  const out = [];
  for (const [param, alts] of params) {
    if (alts.t !== "list") throw new Error(`${name}.${param}: the ground truth is not a list of acceptable values`);
    const optional = alts.v.some(isEmptyString);
    let v = pick(alts.v, r);
    // A few answers list an optional parameter the function does not have; leave it out.
    if (v === null || (optional && !(param in props)) || (optional && !required.has(param) && r.next() < 0.35)) continue;
    const type = props[param]?.type;
    if (type === "dict" && v.t === "dict") v = resolveDict(v, r);
    if ((type === "array" || type === "tuple") && props[param]?.items?.type === "dict" && v.t === "list") {
      v = { t: "list", v: v.v.map((d) => (d.t === "dict" ? resolveDict(d, r) : d)) };
    }
    out.push([param, v]);
  }
  return { name: name.replace(/\./g, "_"), dotted: name, args: out };
}

// ---- rewriting and checking -------------------------------------------------------------------

/**
 * The rewriter's calls as the checker takes them: function name → arguments (a map; a marker when not an object).
 * @param {RewriteResult["tool_calls"]} toolCalls
 */
const decode = (toolCalls) =>
  toolCalls.map((tc) => {
    const node = engine.parseJson(tc.function.arguments);
    const parsed = node ? fromNode(node, engine.isFloatText) : null;
    /** @type {Map<string, PyValue>} */
    const args = parsed?.t === "dict" ? parsed.v : new Map([["__unparsable__", { t: "str", v: "" }]]);
    return new Map([[tc.function.name, args]]);
  });

/**
 * Same text up to whitespace runs (the rewriter drops the whitespace that stood around a call).
 * @param {string | null} a
 * @param {string | null} b
 */
const sameText = (a, b) => (a === null || b === null ? a === b : a.replace(/\s+/g, " ").trim() === b.replace(/\s+/g, " ").trim());

const summary = (/** @type {{ content: string | null, tool_calls: RewriteResult["tool_calls"] }} */ r) => JSON.stringify({ content: r.content, calls: r.tool_calls.map((c) => [c.function.name, c.function.arguments]) });

/**
 * @param {Question["tools"]} tools
 * @param {string} text
 * @param {Rng} r
 */
function streamed(tools, text, r) {
  const rw = new engine.ToolCallStreamRewriter(tools, { startInReasoning: engine.startsInsideReasoning(text) });
  let content = "";
  let pos = 0;
  /** @type {ReturnType<typeof rw.flush>} */
  const events = [];
  while (pos < text.length) {
    const n = 1 + r.int(8);
    events.push(...rw.push(text.slice(pos, pos + n)));
    pos += n;
  }
  events.push(...rw.flush());
  for (const e of events) if (e.type === "text") content += e.delta;
  return summary({ content: content === "" ? null : content, tool_calls: rw.toolCalls });
}

/** @param {string} category */
function recovery(category) {
  const questions = loadCategory(bfclDir, category, engine);
  /** @type {Map<string, { pass: number, total: number }>} */
  const cells = new Map();
  /** @type {Map<string, Array<{ id: string, error: string, text: string, result: RewriteResult }>>} */
  const failures = new Map();
  let selfTestFailures = 0;
  let textSkipped = 0;
  const surroundings = {
    pass: 0,
    total: 0,
    /** @type {Array<{ id: string, key: string, text: string, content: string | null, reasoning: string | undefined }>} */
    examples: [],
  };
  let bytes = 0;
  let ms = 0;
  let streamChecks = 0;
  let streamMismatches = 0;
  /** @type {Array<{ id: string, key: string, text: string }>} */
  const streamExamples = [];
  for (const q of quick ? questions.slice(0, 40) : questions) {
    const r = rng(q.id);
    const answers = answersOf(q);
    const calls = answers.map((a) => concreteCall(a, q.functions, r));
    const direct = calls.map((c) => new Map([[c.name, new Map(c.args)]]));
    const selfError = checkCategory(category, q.functions, direct, answers, true);
    if (selfError !== null) {
      selfTestFailures++;
      console.error(`ground truth ${q.id} fails the checker itself (${selfError}); skipped`);
      continue;
    }
    // A value of the wrong type (BFCL has `true` for a string parameter) cannot be written in a
    // dialect where every value is text: those cells are not applicable for this question.
    const fitsSchema = calls.every((c) => {
      const func = declared(q.functions, c.dotted);
      return c.args.every(([k, v]) => conforms(v, func.parameters.properties?.[k]));
    });
    if (!fitsSchema) textSkipped++;
    const ctx = { rng: r, reasoning: `The user asks: ${q.question}\nI should call ${calls.map((c) => c.name).join(" and ")}.` };
    for (const [dialectName, dialect] of Object.entries(DIALECTS)) {
      if (!fitsSchema && dialect.family === "text") continue;
      for (const [corruptionName, corrupt] of Object.entries(CORRUPTIONS)) {
        const rendered = corrupt(dialect, calls, ctx);
        if (rendered === null) continue;
        const { text } = rendered;
        const t0 = performance.now();
        const result = engine.rewriteToolCalls({ tools: q.tools, text });
        ms += performance.now() - t0;
        bytes += Buffer.byteLength(text);
        const error = checkCategory(category, q.functions, decode(result.tool_calls), answers, true);
        const key = `${dialectName}|${corruptionName}`;
        const cell = cells.get(key) ?? { pass: 0, total: 0 };
        cell.total++;
        if (error === null) cell.pass++;
        else if ((failures.get(key)?.length ?? 0) < 2) failures.set(key, [...(failures.get(key) ?? []), { id: q.id, error, text, result }]);
        cells.set(key, cell);
        surroundings.total++;
        if (sameText(result.content, rendered.content) && sameText(result.reasoning_content ?? null, rendered.reasoning)) surroundings.pass++;
        else if (surroundings.examples.length < 3) surroundings.examples.push({ id: q.id, key, text, content: result.content, reasoning: result.reasoning_content });
        if (r.next() < (quick ? 1 : 0.25)) {
          streamChecks++;
          if (streamed(q.tools, text, r) !== summary(result)) {
            streamMismatches++;
            if (streamExamples.length < 3) streamExamples.push({ id: q.id, key, text });
          }
        }
      }
    }
  }
  return { category, cells, failures, selfTestFailures, textSkipped, surroundings, bytes, ms, streamChecks, streamMismatches, streamExamples };
}

/** @param {string} category */
function falseCalls(category) {
  const questions = loadCategory(bfclDir, category, engine);
  let total = 0;
  let calls = 0;
  /** @type {Array<{ id: string, text: string, calls: Array<RewriteResult["tool_calls"][number]["function"]> }>} */
  const examples = [];
  for (const q of quick ? questions.slice(0, 60) : questions) {
    const r = rng(`prose-${q.id}`);
    for (const text of proseAnswers(q.question, q.functions, r)) {
      total++;
      const result = engine.rewriteToolCalls({ tools: q.tools, text });
      if (result.tool_calls.length > 0) {
        calls++;
        if (examples.length < 5) examples.push({ id: q.id, text, calls: result.tool_calls.map((c) => c.function) });
      }
    }
  }
  return { category, total, calls, examples };
}

// ---- valid/invalid argument pairs ordered by score --------------------------------------------

const PAIR_DIALECTS = ["hermes", "mistral_args", "qwen3_coder", "pythonic_list", "function_eq", "kimi_k2", "gemma4", "llama_json"];

/**
 * @param {Call} call
 * @param {GorillaFunction} func
 */
function invalidVariants(call, func) {
  const props = func.parameters.properties ?? {};
  const required = (func.parameters.required ?? []).filter((p) => call.args.some(([k]) => k === p));
  /** @type {Array<[string, Call["args"]]>} */
  const out = [];
  if (required.length > 0) out.push(["missing_required", call.args.filter(([k]) => k !== required[0])]);
  const typed = call.args.find(([k]) => props[k]?.type);
  if (typed) {
    const [k] = typed;
    const t = props[k]?.type;
    /** @type {PyValue} */
    const wrong = t === "string" || t === "any" ? { t: "dict", v: new Map([["x", { t: "int", v: 1 }]]) } : { t: "str", v: "not a value" };
    out.push(["wrong_type", call.args.map(([a, v]) => [a, a === k ? wrong : v])]);
  }
  out.push(["unknown_property", [...call.args, ["unexpected_extra", { t: "int", v: 1 }]]]);
  const enumParam = call.args.find(([k]) => Array.isArray(props[k]?.enum) && props[k]?.type === "string");
  if (enumParam) out.push(["enum_mismatch", call.args.map(([a, v]) => [a, a === enumParam[0] ? { t: "str", v: "zz_not_in_enum" } : v])]);
  return out;
}

/** @type {Record<string, PyValue["t"][]>} */
const GORILLA_TYPES = { string: ["str"], any: ["str"], integer: ["int"], float: ["int", "float"], boolean: ["bool"], array: ["list"], tuple: ["list"], dict: ["dict"] };

/**
 * The ground truth itself fits the declared types (BFCL has a few answers that do not).
 * @param {PyValue} value
 * @param {GorillaSchema | undefined} schema
 * @returns {boolean}
 */
function conforms(value, schema) {
  const allowed = GORILLA_TYPES[schema?.type ?? ""];
  if (!allowed) return true;
  if (!allowed.includes(value.t)) return false;
  const items = schema?.items;
  if (value.t === "list" && items) return value.v.every((item) => conforms(item, items));
  return true;
}

/** @param {string[]} categories */
function ordering(categories) {
  let pairs = 0;
  let skipped = 0;
  let ordered = 0;
  /** @type {Map<string, { pairs: number, ordered: number }>} */
  const byKind = new Map();
  /** @type {Array<{ id: string, kind: string, good: number, bad: number }>} */
  const examples = [];
  for (const category of categories) {
    const questions = loadCategory(bfclDir, category, engine);
    for (const q of quick ? questions.slice(0, 40) : questions) {
      const r = rng(`pairs-${q.id}`);
      const [answer] = answersOf(q);
      if (!answer) throw new Error(`${category} ${q.id}: no ground-truth call`);
      const call = concreteCall(answer, q.functions, r);
      const func = declared(q.functions, call.dotted);
      if (!call.args.every(([k, v]) => conforms(v, func.parameters.properties?.[k]))) {
        skipped++;
        continue;
      }
      for (const [kind, badArgs] of invalidVariants(call, func)) {
        let dialect = DIALECTS[PAIR_DIALECTS[r.int(PAIR_DIALECTS.length)]];
        // In a text dialect every value of a string parameter is a string: no wrong type to see.
        if (kind === "wrong_type" && dialect.family === "text") dialect = DIALECTS.hermes;
        const score = (/** @type {Call} */ c) => engine.rewriteToolCalls({ tools: q.tools, text: dialect.render([c], CLEAN) }).tool_calls[0]?.score ?? 0;
        const good = score(call);
        const bad = score({ ...call, args: badArgs });
        pairs++;
        const k = byKind.get(kind) ?? { pairs: 0, ordered: 0 };
        k.pairs++;
        if (good > bad) {
          ordered++;
          k.ordered++;
        } else if (examples.length < 5) examples.push({ id: q.id, kind, good, bad });
        byKind.set(kind, k);
      }
    }
  }
  return { pairs, ordered, byKind, examples, skipped };
}

// ---- report -----------------------------------------------------------------------------------

const pct = (/** @type {number} */ a, /** @type {number} */ b) => (b === 0 ? "n/a" : `${((100 * a) / b).toFixed(2)} %`);

/** @param {Array<ReturnType<typeof recovery>>} results */
function recoveryTable(results) {
  const dialects = Object.keys(DIALECTS);
  const corruptions = Object.keys(CORRUPTIONS);
  const lines = [`| dialect | ${corruptions.join(" | ")} |`, `|---|${corruptions.map(() => "---:").join("|")}|`];
  for (const d of dialects) {
    const row = corruptions.map((c) => {
      let pass = 0;
      let total = 0;
      for (const r of results) {
        const cell = r.cells.get(`${d}|${c}`);
        if (cell) {
          pass += cell.pass;
          total += cell.total;
        }
      }
      return total === 0 ? "–" : ((100 * pass) / total).toFixed(1);
    });
    lines.push(`| ${d} | ${row.join(" | ")} |`);
  }
  return lines.join("\n");
}

/** @param {ReturnType<typeof recovery>} result */
function totals(result) {
  let pass = 0;
  let total = 0;
  let worst = { key: "", rate: 1, total: 0 };
  for (const [key, cell] of result.cells) {
    pass += cell.pass;
    total += cell.total;
    const rate = cell.pass / cell.total;
    if (rate < worst.rate) worst = { key, rate, total: cell.total };
  }
  return { pass, total, worst };
}

const tuning = ["simple_python", "multiple", "parallel"];
const reported = ["parallel_multiple"];
const categories = only ? [only] : [...tuning, ...reported];
const results = categories.map((c) => {
  const t0 = performance.now();
  const r = recovery(c);
  console.error(`${c}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return r;
});
const prose = only ? [] : [falseCalls("irrelevance"), ...(quick ? [] : [falseCalls("parallel_multiple")])];
const pairs = only ? null : ordering(["parallel_multiple", "simple_python"]);
const stream = only ? null : measureStreaming(engine, quick);

const out = [];
out.push(`BFCL data: ${bfclDir}${quick ? " (quick run: first questions only)" : ""}`, "");
out.push("Exact recovery (BFCL AST checker) per category:");
for (const r of results) {
  const t = totals(r);
  out.push(
    `  ${r.category.padEnd(18)} ${pct(t.pass, t.total).padStart(9)}  (${t.pass}/${t.total} texts; worst cell ${t.worst.key} ${pct(t.worst.rate * t.worst.total, t.worst.total)} of ${t.worst.total}; ground truth failing its own checker ${r.selfTestFailures}; answers breaking the schema, so not written in text dialects: ${r.textSkipped})`,
  );
  out.push(`  ${"".padEnd(18)} stream = one-shot on ${r.streamChecks - r.streamMismatches}/${r.streamChecks} random-split checks`);
  out.push(`  ${"".padEnd(18)} content and reasoning left exactly as expected: ${pct(r.surroundings.pass, r.surroundings.total)}`);
}
for (const p of prose) out.push(`False calls on prose (${p.category}): ${p.calls}/${p.total} = ${pct(p.calls, p.total)}`);
if (pairs) {
  out.push(
    `Valid/invalid pairs ordered by score: ${pairs.ordered}/${pairs.pairs} = ${pct(pairs.ordered, pairs.pairs)} (${pairs.skipped} questions skipped: their ground truth breaks its own schema)`,
  );
  for (const [kind, k] of pairs.byKind) out.push(`  ${kind.padEnd(17)} ${k.ordered}/${k.pairs}`);
}
const bytes = results.reduce((a, r) => a + r.bytes, 0);
const ms = results.reduce((a, r) => a + r.ms, 0);
out.push(`One-shot throughput: ${(bytes / 1e6 / (ms / 1000)).toFixed(2)} MB/s (${(bytes / 1e6).toFixed(1)} MB in ${(ms / 1000).toFixed(2)} s)`);
if (stream) for (const line of stream.lines) out.push(line);
out.push("", "Recovery by dialect × corruption, % (all categories above):", recoveryTable(results));
console.log(out.join("\n"));

const failing = results.flatMap((r) => [...r.failures.entries()].map(([key, list]) => ({ category: r.category, key, list })));
if (failing.length > 0) {
  console.error(`\n${failing.length} cells with failures; first examples:`);
  for (const f of failing.slice(0, 12)) {
    for (const e of f.list.slice(0, 1)) {
      console.error(`- ${f.category} ${f.key} ${e.id} ${e.error}\n  text: ${JSON.stringify(e.text).slice(0, 400)}\n  got: ${JSON.stringify(e.result.tool_calls.map((c) => c.function))}`);
    }
  }
}
for (const r of results) for (const e of r.surroundings.examples) console.error(`surroundings ${r.category} ${e.key} ${e.id}: ${JSON.stringify(e.text).slice(0, 300)} → content ${JSON.stringify(e.content)} reasoning ${JSON.stringify(e.reasoning)}`);
for (const r of results) for (const e of r.streamExamples) console.error(`stream mismatch ${r.category} ${e.key} ${e.id}: ${JSON.stringify(e.text).slice(0, 300)}`);
for (const p of prose) for (const e of p.examples) console.error(`false call ${p.category} ${e.id}: ${JSON.stringify(e.text).slice(0, 300)} → ${JSON.stringify(e.calls)}`);
if (pairs) for (const e of pairs.examples) console.error(`unordered pair ${e.id} ${e.kind}: valid ${e.good} invalid ${e.bad}`);
if (jsonOut) {
  writeFileSync(
    jsonOut,
    JSON.stringify(
      {
        results: results.map((r) => ({ category: r.category, ...totals(r), streamChecks: r.streamChecks, streamMismatches: r.streamMismatches, cells: Object.fromEntries(r.cells) })),
        prose: prose.map(({ category, total, calls }) => ({ category, total, calls })),
        pairs: pairs && { pairs: pairs.pairs, ordered: pairs.ordered },
        throughputMBps: bytes / 1e6 / (ms / 1000),
        stream: stream?.figures,
      },
      null,
      2,
    ),
  );
}
