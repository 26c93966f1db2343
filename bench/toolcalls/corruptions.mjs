// What happens to tool-call text on its way out of a model: trailing commas, single quotes,
// Python literals, max_tokens cutting off the closing brackets, a code fence, prose around the
// call, a reasoning block (also forced-open), a missing closing tag. A corruption returns null
// where it makes no sense for the dialect.

import { CLEAN } from "./render-dialects.mjs";

/**
 * @typedef {import("./python-values.mjs").PyValue} PyValue
 * @typedef {import("./render-dialects.mjs").Call} Call
 * @typedef {import("./render-dialects.mjs").Dialect} Dialect
 * @typedef {{ rng: { next(): number, int(n: number): number }, reasoning: string }} Context
 * @typedef {{ text: string, content: string | null, reasoning: string | null }} Corrupted
 * @typedef {(d: Dialect, calls: Call[], ctx: Context) => Corrupted | null} Corruption
 */

const hasLiteral = (/** @type {Call[]} */ calls) => {
  /** @type {(x: PyValue) => boolean} */
  const walk = (x) => x.t === "bool" || x.t === "none" || (x.t === "list" && x.v.some(walk)) || (x.t === "dict" && [...x.v.values()].some(walk));
  return calls.some((c) => c.args.some(([, v]) => walk(v)));
};

// Closing brackets, quotes-free closers and end markers that max_tokens may cut off.
const CLOSER = /(?:<\/[\w:]+>|<\|[^|<>\s]*\|>|<｜[^｜]*｜>|```|<tool_call\|>|[}\])]|\s)$/u;

/**
 * Cuts the closing structure off the end, as max_tokens would just before the last brackets.
 * @param {string} text
 */
export function cutClosers(text) {
  let t = text;
  let cut = false;
  for (;;) {
    const m = CLOSER.exec(t);
    if (!m) break;
    t = t.slice(0, t.length - m[0].length);
    cut = true;
  }
  return cut ? t : null;
}

const PROSE_BEFORE = [
  "Sure! Let me take care of that.",
  "I'll look that up for you.",
  "To answer this I need to call a tool.",
  "Here is the function call:",
];
const PROSE_AFTER = ["Let me know if you need anything else.", "I'll report back with the results.", "This should give us the answer."];

/** @type {Record<Dialect["family"], string>} */
const FENCE_LANG = { json: "json", pythonic: "python", text: "xml" };

/**
 * Every corruption returns the text, and what the rewriter should leave besides the calls:
 * `content` (null when nothing) and `reasoning`.
 */
const plain = (/** @type {string | null} */ text) => (text === null ? null : { text, content: null, reasoning: null });

/** @type {Partial<Record<Dialect["family"], Partial<import("./render-dialects.mjs").Style>>>} */
const STYLE_FOR_FAMILY = { json: { q: "'", py: true, trailing: true }, pythonic: { trailing: true } };

/** @type {Record<string, Corruption>} */
export const CORRUPTIONS = {
  none: (d, calls) => plain(d.render(calls, CLEAN)),
  trailing_comma: (d, calls) => plain(d.family === "text" ? null : d.render(calls, { ...CLEAN, trailing: true })),
  single_quotes: (d, calls) => plain(d.family === "json" ? d.render(calls, { ...CLEAN, q: "'" }) : null),
  python_literals: (d, calls) => plain(d.family === "json" && hasLiteral(calls) ? d.render(calls, { ...CLEAN, py: true }) : null),
  truncated: (d, calls) => plain(cutClosers(d.render(calls, CLEAN))),
  code_fence: (d, calls) =>
    plain(d.close?.includes("```") || d.fenced ? null : `\`\`\`${FENCE_LANG[d.family]}\n${d.render(calls, CLEAN)}\n\`\`\``),
  prose: (d, calls, ctx) => {
    const before = PROSE_BEFORE[ctx.rng.int(PROSE_BEFORE.length)];
    const after = PROSE_AFTER[ctx.rng.int(PROSE_AFTER.length)];
    // Explicit markers may follow prose on the same line; bare calls start a line of their own.
    const sep = d.family !== "pythonic" && ctx.rng.int(2) === 0 ? " " : "\n\n";
    return { text: `${before}${sep}${d.render(calls, CLEAN)}${sep}${after}`, content: `${before}${sep}${after}`, reasoning: null };
  },
  think: (d, calls, ctx) => ({ text: `<think>\n${ctx.reasoning}\n</think>\n\n${d.render(calls, CLEAN)}`, content: null, reasoning: ctx.reasoning }),
  think_open: (d, calls, ctx) => ({ text: `${ctx.reasoning}\n</think>\n\n${d.render(calls, CLEAN)}`, content: null, reasoning: ctx.reasoning }),
  missing_close: (d, calls) => {
    const text = d.render(calls, CLEAN);
    const close = d.close?.[0];
    if (!close) return null;
    const i = text.lastIndexOf(close);
    return plain(i < 0 ? null : text.slice(0, i) + text.slice(i + close.length));
  },
  // Several at once: reasoning, prose first, the family's JSON defects, cut off at max_tokens.
  mixed: (d, calls, ctx) => {
    const before = PROSE_BEFORE[ctx.rng.int(PROSE_BEFORE.length)];
    const body = cutClosers(d.render(calls, { ...CLEAN, ...(STYLE_FOR_FAMILY[d.family] ?? {}) }));
    return { text: `<think>\n${ctx.reasoning}\n</think>\n${before}\n${body}`, content: before, reasoning: ctx.reasoning };
  },
};
