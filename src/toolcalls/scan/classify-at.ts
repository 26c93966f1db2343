// What may start at a given position of the output, asked in a fixed order: a reasoning block or
// framing, a stray closing marker, a harmony header, a literal call marker (the tables built from
// dialects/registry.ts), a marker that carries a value, a code fence, or a bare JSON / pythonic
// call (each read by its dialect's file). Every answer depends only on the text up to where it
// looks, and "maybe" means "I need more text": that is what makes the stream give the same result
// however the text is split.

import { MAYBE, NO, skipSpace, type Candidate, type ScanContext } from "../dialects/candidate.ts";
import { action } from "../dialects/command-r.ts";
import { functionary } from "../dialects/functionary.ts";
import { harmonyHeader } from "../dialects/harmony.ts";
import { bracket, functools, jsonObject } from "../dialects/json.ts";
import { CALL_TRIE, REASONING_TRIE, STRAY_TAG_TRIE, STRAY_TOKEN_TRIE, literal } from "../dialects/marker-table.ts";
import { invokeTag } from "../dialects/minimax.ts";
import { pythonic } from "../dialects/pythonic.ts";
import { functionTag } from "../dialects/qwen3-coder.ts";

export type { Candidate, ScanContext } from "../dialects/candidate.ts";

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
  let k = skipSpace(buf, nl + 1);
  if (k >= buf.length) return ctx.eof ? verbatim : MAYBE;
  if (buf[k] === "`") return verbatim;
  // A Command-R `Action:` line inside the fence opens another fence, never a call region, so this
  // fence is text whatever follows; asking would recurse once per repeated line (and overflow).
  if (buf.startsWith("Action:", k)) return verbatim;
  let peek = classifyAt(buf, k, inner);
  // Framing before the calls (Solar Open's `<|tool_calls|>`) says nothing yet: look past it.
  while (peek.kind === "drop" && !peek.strayClose) {
    k = skipSpace(buf, k + peek.length);
    if (k >= buf.length) return ctx.eof ? verbatim : MAYBE;
    if (buf.startsWith("Action:", k)) return verbatim;
    peek = classifyAt(buf, k, inner);
  }
  if (peek.kind === "maybe") return MAYBE;
  return peek.kind === "region" ? { kind: "fence", length, close: "```" } : verbatim;
}

const IDENT_START = /[A-Za-z_]/;

export function classifyAt(buf: string, j: number, ctx: ScanContext): Candidate {
  const c = buf[j]!;
  const calls = ctx.tools.enabled;
  const lineish = ctx.atBoundary || ctx.atLineStart;
  if (c === "<") {
    const r = literal(buf, j, ctx.eof, REASONING_TRIE);
    if (r.kind !== "no") return r;
    if (calls) {
      const s = literal(buf, j, ctx.eof, STRAY_TOKEN_TRIE);
      if (s.kind !== "no") return s;
      const t = ctx.atBoundary ? literal(buf, j, ctx.eof, STRAY_TAG_TRIE) : NO;
      if (t.kind !== "no") return t;
    }
    const h = harmonyHeader(buf, j, ctx.eof, ctx.tools);
    if (h.kind !== "no") return h;
    if (!calls) return NO;
    const m = literal(buf, j, ctx.eof, CALL_TRIE);
    if (m.kind !== "no") return m;
    const f = functionTag(buf, j, ctx.eof);
    if (f.kind !== "no") return f;
    return invokeTag(buf, j, ctx.eof);
  }
  if (c === "[") {
    const r = literal(buf, j, ctx.eof, REASONING_TRIE);
    if (r.kind !== "no" || !calls) return r;
    const m = literal(buf, j, ctx.eof, CALL_TRIE);
    if (m.kind !== "no") return m;
    if (lineish) return bracket(buf, j, ctx);
    // In the middle of a line only a JSON array of calls counts (and strictly).
    const k = skipSpace(buf, j + 1);
    if (k >= buf.length) return ctx.eof ? NO : MAYBE;
    return buf[k] === "{" ? bracket(buf, j, ctx) : NO;
  }
  // MiniMax-M3's namespace token `]<]minimax[>[` opens its call block.
  if (c === "]") return calls ? literal(buf, j, ctx.eof, CALL_TRIE) : NO;
  if (c === "`") {
    if (buf.length - j < 3) return !ctx.eof && "```".startsWith(buf.slice(j)) ? MAYBE : NO;
    return buf.startsWith("```", j) ? fence(buf, j, j, ctx) : NO;
  }
  if (c === "t" && ctx.atBoundary) {
    // The prompt opened a harmony turn (`<|start|>assistant`); the output goes on with ` to=…`.
    const h = harmonyHeader(buf, j, ctx.eof, ctx.tools, true);
    if (h.kind !== "no") return h;
  }
  if (ctx.header === ">>>" && c !== ">") {
    // The prompt ended with Functionary's `>>>`: the output starts with the recipient line.
    const v = functionary(">>>" + buf.slice(j, j + 137), 0, { ...ctx, atBoundary: true });
    if (v.kind === "maybe") return v;
    if (v.kind === "drop" || (calls && v.kind === "region")) return { ...v, length: v.length - 3 };
  }
  if (!calls) return NO;
  if (c === "{") return jsonObject(buf, j, ctx);
  if (c === ">") return functionary(buf, j, ctx);
  if (c === "f") {
    const f = functools(buf, j, ctx);
    if (f.kind !== "no") return f;
  }
  if (c === "A" && (lineish || /\s/.test(ctx.prev))) {
    const a = action(buf, j, ctx, fence);
    if (a.kind !== "no") return a;
  }
  if (lineish && IDENT_START.test(c)) return pythonic(buf, j, j, ctx);
  return NO;
}

/**
 * Whether an explicit call marker (a special token or tag of CALL_MARKERS, `<function=…>`,
 * `<invoke …>`) opens at `j`; "maybe" while the text may still grow into one. Bare JSON and
 * pythonic calls are not explicit.
 */
export function explicitCallAt(buf: string, j: number, eof: boolean): "yes" | "no" | "maybe" {
  const verdict = (c: Candidate) => (c.kind === "maybe" ? "maybe" : c.kind === "region" ? "yes" : "no");
  const m = verdict(literal(buf, j, eof, CALL_TRIE));
  if (m !== "no" || buf[j] !== "<") return m;
  const f = verdict(functionTag(buf, j, eof));
  return f !== "no" ? f : verdict(invokeTag(buf, j, eof));
}

/** Characters at which classifyAt may find something; everything else is plain text. */
export function mayStartCandidate(c: string, lineish: boolean): boolean {
  switch (c) {
    case "<":
    case "[":
    case "]":
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
