// What may start at a given position of the output: an explicit call marker (special tokens and
// tags, reference §3 step 2), a reasoning block, a code fence, or a bare JSON / pythonic call.
// Every answer depends only on the text up to where it looks, and "maybe" means "I need more text":
// that is what makes the stream give the same result however the text is split.

import { CALL_KEYS } from "./decode-json-calls.ts";
import type { RegionSpec } from "./region-end.ts";
import type { ToolSet } from "./tool-set.ts";

export type Candidate =
  | { kind: "no" }
  | { kind: "maybe" }
  | { kind: "region"; length: number; spec: RegionSpec }
  | { kind: "reasoning"; length: number; close: string }
  /** A marker with no content of its own: a stray `</think>`, `<|END_RESPONSE|>`, `>>>all\n`. */
  | { kind: "drop"; length: number }
  /** A code fence that holds no call: passed through as it is, closing fence included. */
  | { kind: "verbatim"; length: number; close: string }
  /** A code fence that may hold calls: read as a whole once closed. */
  | { kind: "fence"; length: number; close: string };

export interface ScanContext {
  tools: ToolSet;
  /** Only whitespace since the output started, a reasoning block ended, or a call ended. */
  atBoundary: boolean;
  /** Only spaces since the last newline. */
  atLineStart: boolean;
  /** The character before the position looked at ("" at the start of the output). */
  prev: string;
  eof: boolean;
}

const NO: Candidate = { kind: "no" };
const MAYBE: Candidate = { kind: "maybe" };

const skipSpace = (t: string, i: number): number => {
  while (i < t.length && /\s/.test(t[i]!)) i++;
  return i;
};

/** Where a JSON body starts after optional whitespace; -2 for a body that is not JSON. */
const jsonStart = (body: string): number => {
  const i = skipSpace(body, 0);
  if (i === body.length) return -1;
  return body[i] === "{" || body[i] === "[" ? i : -2;
};

const afterPrefix = (prefix: string) => (body: string): number => {
  const i = skipSpace(body, 0);
  if (body.length - i < prefix.length && prefix.startsWith(body.slice(i))) return -1;
  const j = body.startsWith(prefix, i) ? skipSpace(body, i + prefix.length) : i;
  if (j === body.length) return -1;
  return body[j] === "{" || body[j] === "[" ? j : -2;
};

/** Mistral v11: NAME[CALL_ID]ID[ARGS]{…}; the brackets of [ARGS] are not the value. */
const mistralStart = (body: string, eof: boolean): number => {
  for (let i = 0; i < body.length; i++) {
    for (const tag of ["[ARGS]", "[CALL_ID]"]) {
      if (body.startsWith(tag, i)) {
        i += tag.length - 1;
        break;
      }
      if (!eof && body.length - i < tag.length && tag.startsWith(body.slice(i))) return -1;
    }
    const c = body[i];
    if (c === "{") return i;
    if (c === "[" && !body.startsWith("[ARGS]", i) && !body.startsWith("[CALL_ID]", i)) return i;
  }
  return -1;
};

const region = (dialect: RegionSpec["dialect"], close: string[], extra: Partial<RegionSpec> = {}) =>
  (open: string): Candidate => ({
    kind: "region",
    length: open.length,
    spec: { dialect, close, reopen: [open], valueStart: jsonStart, multi: close.length > 0, ...extra },
  });

type Build = (open: string) => Candidate;

const reasoning = (close: string): Build => (open) => ({ kind: "reasoning", length: open.length, close });
const drop: Build = (open) => ({ kind: "drop", length: open.length });

const DS_CLOSE = ["<｜tool▁calls▁end｜>", "<｜tool_calls_end｜>", "<｜tool calls end｜>", "<｜tool\\_calls\\_end｜>"];

/** Literal opening markers, most specific first where one is a prefix of another. */
const CALL_MARKERS: Array<[string, Build]> = [
  ["<｜tool▁calls▁begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined, reopen: [] })],
  ["<｜tool_calls_begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined, reopen: [] })],
  ["<｜tool calls begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined, reopen: [] })],
  ["<｜tool\\_calls\\_begin｜>", region("deepseek", DS_CLOSE, { valueStart: undefined, reopen: [] })],
  ["<｜tool▁calls｜>", region("deepseek", DS_CLOSE, { valueStart: undefined, reopen: [] })],
  ["<｜tool▁call▁begin｜>", region("deepseek", ["<｜tool▁call▁end｜>"], { valueStart: undefined })],
  ["<|tool_calls_section_begin|>", region("kimi", ["<|tool_calls_section_end|>"], { valueStart: undefined, reopen: [] })],
  ["<|tool_call_begin|>", region("kimi", ["<|tool_call_end|>"], { valueStart: undefined })],
  ["<|START_ACTION|>", region("json", ["<|END_ACTION|>"])],
  ["<|tool_call|>", region("json", [], { multi: true })],
  ["<|tool_call_start|>", region("auto", ["<|tool_call_end|>"], { valueStart: undefined })],
  ["<|python_start|>", region("auto", ["<|python_end|>"], { valueStart: undefined })],
  ["<|action_start|>", region("json", ["<|action_end|>"], { valueStart: afterPrefix("<|plugin|>") })],
  ["<|tools_prefix|>", region("json", ["<|tools_suffix|>"])],
  ["<|python_tag|>", region("auto", ["<|eom_id|>", "<|eot_id|>"], { multi: false, optionalClose: true })],
  ["<|tool_call>", region("gemma", ["<tool_call|>"], { valueStart: undefined })],
  ["<minimax:tool_call>", region("minimax", ["</minimax:tool_call>"], { valueStart: undefined })],
  ["<seed:tool_call>", region("qwen-xml", ["</seed:tool_call>"], { valueStart: undefined })],
  ["<tool_call>", region("auto", ["</tool_call>"])],
  ["<tool_calls>", region("json", ["</tool_calls>"])],
  ["<TOOLCALL>", region("json", ["</TOOLCALL>"])],
  ["<function_call>", region("json", ["</function_call>"])],
  ["<tools>", region("json", ["</tools>"])],
  ["<json>", region("json", ["</json>"])],
  ["<JSON>", region("json", ["</JSON>"])],
  ["<xml>", region("auto", ["</xml>"])],
  ["<response>", region("json", ["</response>"], { multi: false })],
  ["[TOOL_CALLS]", region("mistral", [], { valueStart: mistralStart, multi: false })],
];

const REASONING_MARKERS: Array<[string, Build]> = [
  ["<think>", reasoning("</think>")],
  ["[THINK]", reasoning("[/THINK]")],
  ["<seed:think>", reasoning("</seed:think>")],
  ["<|START_THINKING|>", reasoning("<|END_THINKING|>")],
  ["<|inner_prefix|>", reasoning("<|inner_suffix|>")],
  ["<|channel>thought", reasoning("<channel|>")],
  // A closing tag with no opening one: the template opened the block (forced-open reasoning).
  ["</think>", drop],
  ["[/THINK]", drop],
  ["</seed:think>", drop],
  ["<|START_RESPONSE|>", drop],
  ["<|END_RESPONSE|>", drop],
  ["<|end|>", drop],
  ["<|return|>", drop],
  ["<|eot_id|>", drop],
  ["<|eom_id|>", drop],
  ["<|im_end|>", drop],
];

function literal(buf: string, j: number, eof: boolean, table: Array<[string, Build]>): Candidate {
  let best: [string, Build] | null = null;
  let maybe = false;
  const avail = buf.length - j;
  for (const entry of table) {
    const open = entry[0];
    if (open.charCodeAt(0) !== buf.charCodeAt(j)) continue;
    if (buf.startsWith(open, j)) {
      if (!best || open.length > best[0].length) best = entry;
    } else if (!eof && avail < open.length && open.startsWith(buf.slice(j))) maybe = true;
  }
  if (maybe) return MAYBE;
  return best ? best[1](best[0]) : NO;
}

/**
 * Whether `partial` (the text so far) may still grow into `<tag=NAME>` or `<tag name="NAME">`:
 * it is a prefix of the opening, or the opening followed by a name not yet closed.
 */
function couldBecomeTag(partial: string, equals: string | null, named: string): boolean {
  if (partial.length >= 160) return false;
  if (equals && (equals.startsWith(partial) || (partial.startsWith(equals) && /^[^>\n<]*$/.test(partial.slice(equals.length))))) {
    return true;
  }
  const p = partial.replace(/\s*=\s*/g, "=").replace(/\s+/g, " ");
  return named.startsWith(p) || (p.startsWith(named) && /^[^"\n]*(?:" ?)?$/.test(p.slice(named.length)));
}

/** `<function=NAME>`, `<function name="NAME">` (Functionary v3.1, Hermes; body JSON or XML). */
function functionTag(buf: string, j: number, eof: boolean): Candidate {
  const m = /^<function(?:=([^>\n<]{1,128})>|\s+name\s*=\s*"([^"\n]{1,128})"\s*>)/.exec(buf.slice(j, j + 160));
  if (m) {
    const name = (m[1] ?? m[2])!.trim();
    return {
      kind: "region",
      length: m[0].length,
      spec: { dialect: "function-tag", close: ["</function>"], reopen: ["<function=", "<function "], valueStart: jsonStart, name },
    };
  }
  if (eof) return NO;
  return couldBecomeTag(buf.slice(j, j + 160), "<function=", "<function name=\"") ? MAYBE : NO;
}

/** MiniMax without its outer tag: <invoke name="NAME">…</invoke>. */
function invokeTag(buf: string, j: number, eof: boolean): Candidate {
  const head = buf.slice(j, j + 160);
  if (/^<invoke\s+name\s*=\s*"[^"\n]{1,128}"\s*>/.test(head)) {
    return { kind: "region", length: 0, spec: { dialect: "minimax", close: ["</invoke>"], reopen: [], closeInBody: true } };
  }
  if (!eof && couldBecomeTag(head, null, "<invoke name=\"")) return MAYBE;
  return NO;
}

/** Harmony (gpt-oss): `<|start|>assistant<|channel|>commentary to=functions.NAME …<|message|>`. */
function harmony(buf: string, j: number, eof: boolean, callsEnabled: boolean): Candidate {
  const head = buf.slice(j, j + 400);
  for (const open of ["<|start|>", "<|channel|>"]) {
    if (!head.startsWith(open)) {
      if (!eof && head.length < open.length && open.startsWith(head)) return MAYBE;
      continue;
    }
    const msg = head.indexOf("<|message|>");
    if (msg < 0) return !eof && head.length < 400 ? MAYBE : NO;
    const header = head.slice(0, msg);
    const length = msg + "<|message|>".length;
    const to = /\bto=(?:functions\.)?([^\s<]+)/.exec(header);
    const channel = /<\|channel\|>\s*(\w+)/.exec(header)?.[1];
    if (to && callsEnabled) {
      return {
        kind: "region",
        length,
        spec: {
          dialect: "named-json",
          close: ["<|call|>", "<|end|>", "<|return|>"],
          reopen: ["<|start|>"],
          valueStart: jsonStart,
          name: to[1]!,
          optionalClose: true,
        },
      };
    }
    if (channel === "analysis") return { kind: "reasoning", length, close: "<|end|>" };
    return { kind: "drop", length };
  }
  return NO;
}

const IDENT = /[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)*/y;

/** A dotted identifier at `i`; `complete` is false when the text ends inside it. */
function identifier(buf: string, i: number): { name: string; end: number; complete: boolean } | null {
  IDENT.lastIndex = i;
  const m = IDENT.exec(buf);
  if (!m) return null;
  let end = i + m[0].length;
  // A trailing "." may still grow into a dotted name.
  const complete = end < buf.length && !(buf[end] === "." && end + 1 === buf.length);
  return { name: m[0], end, complete };
}

/** The first key of an object starting at `i` (`{`); a call's first key is one of few. */
function firstKeyFits(buf: string, i: number, ctx: ScanContext): Candidate | true {
  let k = skipSpace(buf, i + 1);
  if (k >= buf.length) return ctx.eof ? NO : MAYBE;
  const q = buf[k]!;
  let key: string;
  if (q === '"' || q === "'") {
    let e = k + 1;
    while (e < buf.length && buf[e] !== q) e += buf[e] === "\\" ? 2 : 1;
    if (e >= buf.length) return ctx.eof || e - k > 128 ? NO : MAYBE;
    key = buf.slice(k + 1, e);
    k = e + 1;
  } else {
    const id = identifier(buf, k);
    if (!id) return NO;
    if (!id.complete) return ctx.eof ? NO : MAYBE;
    key = id.name;
    k = id.end;
  }
  k = skipSpace(buf, k);
  if (k >= buf.length) return ctx.eof ? NO : MAYBE;
  if (buf[k] !== ":") return NO;
  if (CALL_KEYS.has(key) || (ctx.atBoundary && key === "response") || ctx.tools.isToolName(key)) return true;
  return NO;
}

function jsonObject(buf: string, j: number, ctx: ScanContext): Candidate {
  const fits = firstKeyFits(buf, j, ctx);
  if (fits !== true) return fits;
  return {
    kind: "region",
    length: 0,
    spec: { dialect: "json", close: [], reopen: [], valueStart: () => 0, strict: !ctx.atBoundary, allowResponse: ctx.atBoundary },
  };
}

/** `[{…}, …]` or `[f(a=1), …]` at the start of the output or of a line. */
function bracket(buf: string, j: number, ctx: ScanContext): Candidate {
  const k = skipSpace(buf, j + 1);
  if (k >= buf.length) return ctx.eof ? NO : MAYBE;
  if (buf[k] === "{") {
    const fits = firstKeyFits(buf, k, ctx);
    if (fits !== true) return fits;
    return {
      kind: "region",
      length: 0,
      spec: { dialect: "json", close: [], reopen: [], valueStart: () => 0, strict: !ctx.atBoundary },
    };
  }
  return pythonic(buf, j, k, ctx);
}

/** `name(` at the start of the output (any name) or of a line (a declared name only). */
function pythonic(buf: string, j: number, k: number, ctx: ScanContext): Candidate {
  const id = identifier(buf, k);
  if (!id) return NO;
  const strict = !ctx.atBoundary;
  // Only a word that may still become a declared name is held back, so an answer's first word
  // flows at once. The test depends on the word alone, never on what follows it, so the answer
  // is the same however the text is split.
  if (id.name.length > 128 || !ctx.tools.mayBecomeToolName(id.name)) return NO;
  if (!id.complete) return ctx.eof ? NO : MAYBE;
  const next = buf[id.end];
  if (next === "(") {
    const declared = ctx.tools.isToolName(id.name) || (id.name.endsWith(".call") && ctx.tools.isToolName(id.name.slice(0, -5)));
    if (strict && !declared) return NO;
    return {
      kind: "region",
      length: 0,
      spec: { dialect: "pythonic", close: [], reopen: [], valueStart: () => 0, strict, lineEnd: strict },
    };
  }
  // Functionary v3.2 may omit the first `>>>`: NAME\n{…} as the whole output.
  if (!strict && k === j && (next === "\n" || next === "\r")) {
    const b = skipSpace(buf, id.end);
    if (b >= buf.length) return ctx.eof ? NO : MAYBE;
    if (buf[b] === "{" && ctx.tools.isToolName(id.name)) {
      return {
        kind: "region",
        length: id.end - j,
        spec: { dialect: "named-json", close: [], reopen: [], valueStart: jsonStart, name: id.name },
      };
    }
  }
  return NO;
}

/** Functionary v3.2: `>>>NAME\n{…}`; `>>>all\n` introduces plain text. */
function functionary(buf: string, j: number, ctx: ScanContext): Candidate {
  const head = buf.slice(j, j + 140);
  if (head.length < 3) return !ctx.eof && ">>>".startsWith(head) ? MAYBE : NO;
  if (!head.startsWith(">>>")) return NO;
  const nl = head.indexOf("\n");
  if (nl < 0) return !ctx.eof && head.length < 140 && /^>>>[\w.\-]*$/.test(head) ? MAYBE : NO;
  const name = head.slice(3, nl).trim();
  if (!/^[\w.\-]+$/.test(name)) return NO;
  if (name === "all") return { kind: "drop", length: nl + 1 };
  // v3.2 writes `>>>` wherever a message part starts; in the middle of prose the name must be declared.
  if (!(ctx.atBoundary || ctx.atLineStart) && !ctx.tools.isToolName(name)) return NO;
  return {
    kind: "region",
    length: nl + 1,
    spec: { dialect: "named-json", close: [], reopen: [">>>"], valueStart: jsonStart, name },
  };
}

const FENCE_LANGS = /^(?:json|tool_code|tool_call|tool_calls|python|py|xml|javascript|js|text|)$/i;

/** A ``` fence: its language line, then a peek at its first characters. */
function fence(buf: string, j: number, from: number, ctx: ScanContext): Candidate {
  const nl = buf.indexOf("\n", from + 3);
  if (nl < 0) return ctx.eof || buf.length - j > 200 ? NO : MAYBE;
  const lang = buf.slice(from + 3, nl).trim();
  if (/`/.test(lang)) return NO;
  const length = nl + 1 - j;
  const verbatim: Candidate = { kind: "verbatim", length, close: "```" };
  if (!FENCE_LANGS.test(lang) || !ctx.tools.enabled) return verbatim;
  const inner: ScanContext = { ...ctx, atBoundary: true, atLineStart: true, prev: "\n" };
  const k = skipSpace(buf, nl + 1);
  if (k >= buf.length) return ctx.eof ? verbatim : MAYBE;
  if (buf[k] === "`") return verbatim;
  const peek = classifyAt(buf, k, inner);
  if (peek.kind === "maybe") return MAYBE;
  return peek.kind === "region" ? { kind: "fence", length, close: "```" } : verbatim;
}

/** Command-R+: `Action: ```json\n[…]\n```` */
function action(buf: string, j: number, ctx: ScanContext): Candidate {
  const head = buf.slice(j, j + 16);
  if (!head.startsWith("Action:")) return !ctx.eof && "Action:".startsWith(head) ? MAYBE : NO;
  const k = skipSpace(buf, j + 7);
  if (k >= buf.length) return ctx.eof ? NO : MAYBE;
  if (!buf.startsWith("```", k)) return buf.length - k < 3 && !ctx.eof && "```".startsWith(buf.slice(k)) ? MAYBE : NO;
  const f = fence(buf, j, k, ctx);
  return f.kind === "verbatim" ? NO : f;
}

const IDENT_START = /[A-Za-z_]/;

export function classifyAt(buf: string, j: number, ctx: ScanContext): Candidate {
  const c = buf[j]!;
  const calls = ctx.tools.enabled;
  const lineish = ctx.atBoundary || ctx.atLineStart;
  if (c === "<") {
    const r = literal(buf, j, ctx.eof, REASONING_MARKERS);
    if (r.kind !== "no") return r;
    const h = harmony(buf, j, ctx.eof, calls);
    if (h.kind !== "no") return h;
    if (!calls) return NO;
    const m = literal(buf, j, ctx.eof, CALL_MARKERS);
    if (m.kind !== "no") return m;
    const f = functionTag(buf, j, ctx.eof);
    if (f.kind !== "no") return f;
    return invokeTag(buf, j, ctx.eof);
  }
  if (c === "[") {
    const r = literal(buf, j, ctx.eof, REASONING_MARKERS);
    if (r.kind !== "no" || !calls) return r;
    const m = literal(buf, j, ctx.eof, CALL_MARKERS);
    if (m.kind !== "no") return m;
    if (lineish) return bracket(buf, j, ctx);
    // In the middle of a line only a JSON array of calls counts (and strictly).
    const k = skipSpace(buf, j + 1);
    if (k >= buf.length) return ctx.eof ? NO : MAYBE;
    return buf[k] === "{" ? bracket(buf, j, ctx) : NO;
  }
  if (c === "`") {
    if (buf.length - j < 3) return !ctx.eof && "```".startsWith(buf.slice(j)) ? MAYBE : NO;
    return buf.startsWith("```", j) ? fence(buf, j, j, ctx) : NO;
  }
  if (!calls) return NO;
  if (c === "{") return jsonObject(buf, j, ctx);
  if (c === ">") return functionary(buf, j, ctx);
  if (c === "f" && !/[\w.]/.test(ctx.prev) && (buf.startsWith("functools[", j) || (!ctx.eof && buf.length - j < 10 && "functools[".startsWith(buf.slice(j))))) {
    if (buf.length - j < 10) return MAYBE;
    return { kind: "region", length: 9, spec: { dialect: "json", close: [], reopen: [], valueStart: jsonStart } };
  }
  if (c === "A" && (lineish || /\s/.test(ctx.prev))) {
    const a = action(buf, j, ctx);
    if (a.kind !== "no") return a;
  }
  if (lineish && IDENT_START.test(c)) return pythonic(buf, j, j, ctx);
  return NO;
}

/** Characters at which classifyAt may find something; everything else is plain text. */
export function mayStartCandidate(c: string, lineish: boolean): boolean {
  switch (c) {
    case "<":
    case "[":
    case "`":
    case "{":
    case "f":
    case "A":
      return true;
    case ">":
      return true;
    default:
      return lineish && IDENT_START.test(c);
  }
}
