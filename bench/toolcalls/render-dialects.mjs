// Renders calls (Python-typed argument values) the way each model family writes them as text
// (reference §1). A style carries the JSON corruptions: quote character, Python literals, a
// trailing comma in the arguments object.

/**
 * @typedef {import("./python-values.mjs").PyValue} PyValue
 * @typedef {{ name: string, dotted: string, args: Array<[string, PyValue]> }} Call a call: `name` as the tool is declared, `dotted` as BFCL names it
 * @typedef {{ q: string, py: boolean, trailing: boolean }} Style
 * @typedef {{ family: "json" | "pythonic" | "text", close?: string[], fenced?: boolean, render(calls: Call[], style: Style): string }} Dialect
 */

/** @type {Style} */
export const CLEAN = { q: '"', py: false, trailing: false };

/**
 * @param {string} s
 * @param {string} q the quote character
 */
function pyString(s, q) {
  let quote = q;
  if (q === "'" && s.includes("'") && !s.includes('"')) quote = '"';
  const body = s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t");
  return quote + body.split(quote).join("\\" + quote) + quote;
}

const numberText = (/** @type {Extract<PyValue, { t: "int" | "float" }>} */ x) => (x.t === "float" ? (Number.isInteger(x.v) ? x.v.toFixed(1) : String(x.v)) : String(x.v));

/**
 * JSON (or Python-dict-ish JSON when the style says so).
 * @param {PyValue} x
 * @returns {string}
 */
export function json(x, style = CLEAN, trailing = false) {
  switch (x.t) {
    case "str":
      return style.q === '"' ? JSON.stringify(x.v) : pyString(x.v, "'");
    case "int":
    case "float":
      return numberText(x);
    case "bool":
      return style.py ? (x.v ? "True" : "False") : String(x.v);
    case "none":
      return style.py ? "None" : "null";
    case "list":
      return `[${x.v.map((v) => json(v, style)).join(", ")}]`;
    case "dict": {
      const items = [...x.v].map(([k, v]) => `${json({ t: "str", v: k }, style)}: ${json(v, style)}`);
      return `{${items.join(", ")}${trailing && items.length > 0 ? "," : ""}}`;
    }
  }
  throw new Error(/** @type {{ t: string }} */ (x).t);
}

/**
 * Python literal, as repr() writes it.
 * @param {PyValue} x
 * @returns {string}
 */
export function python(x, q = "'") {
  switch (x.t) {
    case "str":
      return pyString(x.v, q);
    case "int":
    case "float":
      return numberText(x);
    case "bool":
      return x.v ? "True" : "False";
    case "none":
      return "None";
    case "list":
      return `[${x.v.map((v) => python(v, q)).join(", ")}]`;
    case "dict":
      return `{${[...x.v].map(([k, v]) => `${pyString(k, q)}: ${python(v, q)}`).join(", ")}}`;
  }
  throw new Error(/** @type {{ t: string }} */ (x).t);
}

/** Raw parameter text for the XML dialects: strings as they are, everything else as JSON. */
const raw = (/** @type {PyValue} */ x) => (x.t === "str" ? x.v : json(x));

/**
 * Gemma 4: bare keys, strings between <|"|>.
 * @param {PyValue} x
 * @returns {string}
 */
function gemma(x) {
  switch (x.t) {
    case "str":
      return `<|"|>${x.v}<|"|>`;
    case "list":
      return `[${x.v.map(gemma).join(",")}]`;
    case "dict":
      return `{${[...x.v].map(([k, v]) => `${k}:${gemma(v)}`).join(",")}}`;
    default:
      return json(x);
  }
}

/**
 * @param {Call} call
 * @returns {PyValue}
 */
const argsDict = (call) => ({ t: "dict", v: new Map(call.args) });
const args = (/** @type {Call} */ call, /** @type {Style} */ style) => json(argsDict(call), style, style.trailing);
const str = (/** @type {string} */ s, /** @type {Style} */ style) => json({ t: "str", v: s }, style);
/**
 * An object of already rendered values.
 * @param {Array<[string, string]>} pairs
 * @param {Style} style
 */
const obj = (pairs, style) => `{${pairs.map(([k, v]) => `${str(k, style)}: ${v}`).join(", ")}}`;
const nameArgs = (/** @type {Call} */ c, /** @type {Style} */ s, argKey = "arguments") => obj([["name", str(c.name, s)], [argKey, args(c, s)]], s);
const pyCall = (/** @type {Call} */ c, /** @type {Style} */ s) => `${c.dotted}(${c.args.map(([k, v]) => `${k}=${python(v)}`).join(", ")}${s.trailing && c.args.length > 0 ? "," : ""})`;
const mistralId = (/** @type {number} */ i) => `aB3dE5gH${i % 10}`;
const xmlQwen = (/** @type {Call} */ c) =>
  `<function=${c.name}>\n${c.args.map(([k, v]) => `<parameter=${k}>\n${raw(v)}\n</parameter>\n`).join("")}</function>`;
// Seed-OSS's template writes the value right between the tags (ByteDance-Seed-OSS.jinja).
const xmlSeed = (/** @type {Call} */ c) => `<function=${c.name}>\n${c.args.map(([k, v]) => `<parameter=${k}>${raw(v)}</parameter>\n`).join("")}</function>`;

/**
 * family: which corruptions make sense (json: quotes, literals, trailing comma; pythonic: trailing
 * comma; text: none). close: the closing markers, for the missing-closing-tag corruption.
 * @type {Record<string, Dialect>}
 */
export const DIALECTS = {
  hermes: { family: "json", close: ["</tool_call>"], render: (cs, s) => cs.map((c) => `<tool_call>\n${nameArgs(c, s)}\n</tool_call>`).join("\n") },
  llama_json: { family: "json", render: (cs, s) => cs.map((c) => nameArgs(c, s, "parameters")).join("; ") },
  llama_python_tag: { family: "json", render: (cs, s) => `<|python_tag|>${cs.map((c) => nameArgs(c, s, "parameters")).join("; ")}` },
  function_eq: { family: "json", close: ["</function>"], render: (cs, s) => cs.map((c) => `<function=${c.name}>${args(c, s)}</function>`).join("\n") },
  function_name: { family: "json", close: ["</function>"], render: (cs, s) => cs.map((c) => `<function name="${c.name}">${args(c, s)}</function>`).join("\n") },
  functionary: { family: "json", render: (cs, s) => cs.map((c) => `>>>${c.name}\n${args(c, s)}`).join("\n") },
  mistral_array: {
    family: "json",
    render: (cs, s) => `[TOOL_CALLS] [${cs.map((c, i) => obj([["name", str(c.name, s)], ["arguments", args(c, s)], ["id", str(mistralId(i), s)]], s)).join(", ")}]`,
  },
  mistral_args: { family: "json", render: (cs, s) => cs.map((c) => `[TOOL_CALLS]${c.name}[ARGS]${args(c, s)}`).join("") },
  mistral_call_id: { family: "json", render: (cs, s) => cs.map((c, i) => `[TOOL_CALLS]${c.name}[CALL_ID]${mistralId(i)}[ARGS]${args(c, s)}`).join("") },
  functools: { family: "json", render: (cs, s) => ` functools[${cs.map((c) => nameArgs(c, s)).join(", ")}]` },
  pythonic_list: { family: "pythonic", render: (cs, s) => `[${cs.map((c) => pyCall(c, s)).join(", ")}]` },
  pythonic_lines: { family: "pythonic", render: (cs, s) => cs.map((c) => pyCall(c, s)).join("\n") },
  granite: { family: "json", render: (cs, s) => `<|tool_call|>[${cs.map((c) => nameArgs(c, s)).join(", ")}]` },
  tool_calls_tag: { family: "json", close: ["</tool_calls>"], render: (cs, s) => `<tool_calls>[${cs.map((c) => nameArgs(c, s)).join(", ")}]</tool_calls>` },
  toolcall_tag: { family: "json", close: ["</TOOLCALL>"], render: (cs, s) => `<TOOLCALL>[${cs.map((c) => nameArgs(c, s)).join(", ")}]</TOOLCALL>` },
  apertus: { family: "json", close: ["<|tools_suffix|>"], render: (cs, s) => `<|tools_prefix|>[${cs.map((c) => obj([[c.name, args(c, s)]], s)).join(", ")}]<|tools_suffix|>` },
  internlm: {
    family: "json",
    close: ["<|action_end|>"],
    render: (cs, s) => cs.map((c) => `<|action_start|><|plugin|>\n${nameArgs(c, s, "parameters")}<|action_end|>`).join("\n"),
  },
  deepseek_v3: {
    family: "json",
    fenced: true,
    close: ["<｜tool▁calls▁end｜>"],
    render: (cs, s) =>
      `<｜tool▁calls▁begin｜>${cs.map((c) => `<｜tool▁call▁begin｜>function<｜tool▁sep｜>${c.name}\n\`\`\`json\n${args(c, s)}\n\`\`\`<｜tool▁call▁end｜>`).join("\n")}<｜tool▁calls▁end｜>`,
  },
  deepseek_v31: {
    family: "json",
    close: ["<｜tool▁calls▁end｜>"],
    render: (cs, s) => `<｜tool▁calls▁begin｜>${cs.map((c) => `<｜tool▁call▁begin｜>${c.name}<｜tool▁sep｜>${args(c, s)}<｜tool▁call▁end｜>`).join("")}<｜tool▁calls▁end｜>`,
  },
  kimi_k2: {
    family: "json",
    close: ["<|tool_calls_section_end|>"],
    render: (cs, s) =>
      `<|tool_calls_section_begin|>${cs.map((c, i) => `<|tool_call_begin|>functions.${c.name}:${i}<|tool_call_argument_begin|>${args(c, s)}<|tool_call_end|>`).join("")}<|tool_calls_section_end|>`,
  },
  qwen3_coder: { family: "text", close: ["</tool_call>"], render: (cs) => cs.map((c) => `<tool_call>\n${xmlQwen(c)}\n</tool_call>`).join("\n") },
  seed_oss: { family: "text", close: ["</seed:tool_call>"], render: (cs) => cs.map((c) => `<seed:tool_call>\n${xmlSeed(c)}\n</seed:tool_call>`).join("\n") },
  glm: {
    family: "text",
    close: ["</tool_call>"],
    render: (cs) => cs.map((c) => `<tool_call>${c.name}\n${c.args.map(([k, v]) => `<arg_key>${k}</arg_key>\n<arg_value>${raw(v)}</arg_value>\n`).join("")}</tool_call>`).join("\n"),
  },
  hunyuan: {
    family: "text",
    close: ["</tool_calls:opensource>"],
    render: (cs) =>
      `<tool_calls:opensource>\n${cs.map((c) => `<tool_call:opensource>${c.name}<tool_sep:opensource>\n${c.args.map(([k, v]) => `<arg_key:opensource>${k}</arg_key:opensource>\n<arg_value:opensource>${raw(v)}</arg_value:opensource>\n`).join("")}</tool_call:opensource>\n`).join("")}</tool_calls:opensource>`,
  },
  solar: {
    family: "json",
    close: ["<|tool_call:end|>"],
    render: (cs, s) => `<|tool_calls|>${cs.map((c, i) => `<|tool_call:begin|>a1b2c3d4e${i}<|tool_call:name|>${c.name}<|tool_call:args|>${args(c, s)}<|tool_call:end|>`).join("")}<|calls|>`,
  },
  minimax_m2: {
    family: "text",
    close: ["</minimax:tool_call>"],
    render: (cs) =>
      `<minimax:tool_call>\n${cs.map((c) => `<invoke name="${c.name}">\n${c.args.map(([k, v]) => `<parameter name="${k}">${raw(v)}</parameter>\n`).join("")}</invoke>\n`).join("")}</minimax:tool_call>`,
  },
  harmony: {
    family: "json",
    render: (cs, s) => cs.map((c) => `<|start|>assistant<|channel|>commentary to=functions.${c.name} <|constrain|>json<|message|>${args(c, s)}<|call|>`).join(""),
  },
  command_r: {
    family: "json",
    close: ["<|END_ACTION|>"],
    render: (cs, s) => `<|START_ACTION|>[${cs.map((c, i) => obj([["tool_call_id", str(String(i), s)], ["tool_name", str(c.name, s)], ["parameters", args(c, s)]], s)).join(", ")}]<|END_ACTION|>`,
  },
  command_r_plus: {
    family: "json",
    close: ["```"],
    render: (cs, s) => `Action: \`\`\`json\n[${cs.map((c) => obj([["tool_name", str(c.name, s)], ["parameters", args(c, s)]], s)).join(",\n")}]\n\`\`\``,
  },
  gemma4: { family: "text", close: ["<tool_call|>"], render: (cs) => cs.map((c) => `<|tool_call>call:${c.name}${gemma(argsDict(c))}<tool_call|>`).join("") },
  localai: { family: "json", render: (cs, s) => cs.map((c) => obj([["function", str(c.name, s)], ["arguments", args(c, s)]], s)).join("\n") },
  openai_typed: {
    family: "json",
    render: (cs, s) => {
      const one = (/** @type {Call} */ c) => obj([["type", str("function", s)], ["function", obj([["name", str(c.name, s)], ["arguments", str(args(c, s), s)]], s)]], s);
      return cs.length === 1 ? one(cs[0]) : `[${cs.map(one).join(", ")}]`;
    },
  },
  openai_flat: { family: "json", render: (cs, s) => cs.map((c) => obj([["name", str(c.name, s)], ["arguments", str(args(c, s), s)]], s)).join("\n") },
  generic: {
    family: "json",
    render: (cs, s) => (cs.length === 1 ? obj([["tool_call", nameArgs(cs[0], s)]], s) : obj([["tool_calls", `[${cs.map((c) => nameArgs(c, s)).join(", ")}]`]], s)),
  },
  xlam_array: { family: "json", render: (cs, s) => `[${cs.map((c) => nameArgs(c, s)).join(", ")}]` },
  name_as_key: { family: "json", render: (cs, s) => (cs.length === 1 ? obj([[cs[0].name, args(cs[0], s)]], s) : `[${cs.map((c) => obj([[c.name, args(c, s)]], s)).join(", ")}]`) },
  json_fence: { family: "json", close: ["```"], render: (cs, s) => `\`\`\`json\n${cs.length === 1 ? nameArgs(cs[0], s) : `[${cs.map((c) => nameArgs(c, s)).join(", ")}]`}\n\`\`\`` },
  tool_code_fence: { family: "pythonic", close: ["```"], render: (cs, s) => `\`\`\`tool_code\n${cs.map((c) => pyCall(c, s)).join("\n")}\n\`\`\`` },
  lfm2: { family: "pythonic", close: ["<|tool_call_end|>"], render: (cs, s) => `<|tool_call_start|>[${cs.map((c) => pyCall(c, s)).join(", ")}]<|tool_call_end|>` },
};
