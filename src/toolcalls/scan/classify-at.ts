// What may start at a given position of the output, asked in a fixed order (dialects/opener-table.ts,
// built once from dialects/registry.ts): a reasoning block or framing, a stray closing marker, a
// literal call marker (the tables of marker-table.ts), and the openers the dialects declare in their
// own files (a harmony header, a marker that carries a value, a bare JSON / pythonic call), each at
// its order number among them; a code fence is read here. Every answer depends only on the text up
// to where it looks, and "maybe" means "I need more text": that is what makes the stream give the
// same result however the text is split.

import { MAYBE, NO, skipSpace, type Candidate, type ScanContext } from "../dialects/candidate.ts";
import { CALL_TRIE, literal } from "../dialects/marker-table.ts";
import { MAY_START, callsAt, openerHolds, stepsAt } from "../dialects/opener-table.ts";

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

export function classifyAt(buf: string, j: number, ctx: ScanContext): Candidate {
  const c = buf[j]!;
  if (c === "`") {
    if (buf.length - j < 3) return !ctx.eof && "```".startsWith(buf.slice(j)) ? MAYBE : NO;
    return buf.startsWith("```", j) ? fence(buf, j, j, ctx) : NO;
  }
  const calls = ctx.tools.enabled;
  for (const step of stepsAt(buf.charCodeAt(j))) {
    if (!calls && !step.withoutTools) continue;
    const holds = openerHolds(step.where, buf, j, ctx);
    if (holds !== true) {
      if (holds.kind === "maybe") return holds;
      continue;
    }
    const found = step.read(buf, j, ctx, fence);
    if (found.kind !== "no") return found;
  }
  return NO;
}

/**
 * Whether an explicit call marker (a special token or tag of CALL_MARKERS, or an opener of a
 * dialect that names it one: `<function=…>`, `<invoke …>`) opens at `j`; "maybe" while the text
 * may still grow into one. Bare JSON and pythonic calls are not explicit.
 */
export function explicitCallAt(buf: string, j: number, eof: boolean): "yes" | "no" | "maybe" {
  const verdict = (c: Candidate) => (c.kind === "maybe" ? "maybe" : c.kind === "region" ? "yes" : "no");
  const m = verdict(literal(buf, j, eof, CALL_TRIE));
  if (m !== "no") return m;
  for (const call of callsAt(buf.charCodeAt(j))) {
    const v = verdict(call(buf, j, eof));
    if (v !== "no") return v;
  }
  return "no";
}

/**
 * Characters at which classifyAt may find something (a fence's backtick, and those the literal
 * markers and the dialects' openers start at); everything else is plain text.
 */
export function mayStartCandidate(c: string, lineish: boolean): boolean {
  if (c === "`") return true;
  const code = c.charCodeAt(0);
  if (code >= 128) return false;
  const may = MAY_START[code]!;
  return may === 2 || (lineish && may === 1);
}
