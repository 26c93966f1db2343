// MiniMax-M3: every tag of a call is preceded by the namespace token `]<]minimax[>[`, and each
// parameter is an element named after its key, its value written as XML all the way down:
//   ]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="NAME">]<]minimax[>[<city>Tokyo]<]minimax[>[</city>
//   ]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>
// An object is one child element per key, an array repeated `<item>` elements. The parser keeps each
// element's inner text verbatim and its children; the schema decides which one is the value
// (`convertTextEntry`), as a string parameter takes the inner text, tags and all. Reasoning is in
// <mm:think>.

import type { RegionParser } from "./candidate.ts";
import { callsOf, reasoning, region, strayClose, type Dialect } from "./dialect.ts";
import { CALLS_READ_PER_REGION, toCalls, type CallText } from "../parse/tagged-calls.ts";
import type { RawCall, TextEntry } from "../scoring/raw-call.ts";
import { ForwardSearch } from "../text/forward-search.ts";
import { openTags, readNamedTag, type TagPattern } from "../text/open-tags.ts";

export const MINIMAX_NS = "]<]minimax[>[";

const OPEN = /\]<\]minimax\[>\[<([^\s<>/"]+)>/y;
const INVOKE: TagPattern = { prefix: "<invoke", lead: MINIMAX_NS, read: (t, at) => readNamedTag(t, at, "name", "close") };

/**
 * Elements nested deeper than this keep their inner text and no children: each level re-reads its
 * content, so the depth bounds the work per character (and the recursion).
 */
export const MAX_ELEMENT_DEPTH = 32;

/**
 * Where the element `key` whose content starts at `from` closes (nested ones of the same name
 * skipped), or -1. One walk over the namespace tokens up to that point: the text past the closing
 * tag is never searched (looking for the next opening tag there made sibling elements quadratic).
 */
function closingTag(text: string, from: number, key: string): number {
  const open = `<${key}>`;
  const close = `</${key}>`;
  let depth = 0;
  for (let i = text.indexOf(MINIMAX_NS, from); i >= 0; i = text.indexOf(MINIMAX_NS, i + 1)) {
    const at = i + MINIMAX_NS.length;
    if (text.startsWith(open, at)) depth++;
    else if (text.startsWith(close, at)) {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

interface Elements {
  list: TextEntry[];
  /** The text was nothing but elements (and whitespace between them). */
  whole: boolean;
  /** The last element's closing tag never came. */
  cut: boolean;
}

function elements(text: string, depth: number): Elements {
  const list: TextEntry[] = [];
  for (let i = 0; ; ) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) return { list, whole: true, cut: false };
    OPEN.lastIndex = i;
    const m = OPEN.exec(text);
    if (!m) return { list, whole: false, cut: false };
    const key = m[1]!;
    const start = i + m[0].length;
    const end = closingTag(text, start, key);
    list.push(element(key, text.slice(start, end < 0 ? text.length : end), depth));
    if (end < 0) return { list, whole: true, cut: true };
    i = end + MINIMAX_NS.length + key.length + 3;
  }
}

function element(key: string, raw: string, depth: number): TextEntry {
  if (depth >= MAX_ELEMENT_DEPTH) return { key, raw };
  const inner = elements(raw, depth + 1);
  return inner.whole && (inner.list.length > 0 || raw.trim() === "") ? { key, raw, children: inner.list } : { key, raw };
}

/** The calls of a `]<]minimax[>[<tool_call>` region (the text between it and its closing tag). */
export function parseMinimaxM3Calls(body: string, regionClosed: boolean): RawCall[] | null {
  const opens = openTags(body, INVOKE, CALLS_READ_PER_REGION + 1);
  const closes = new ForwardSearch(body, "</invoke>");
  const list: CallText[] = opens.slice(0, CALLS_READ_PER_REGION).map((m, i) => {
    const start = m.end;
    const next = i + 1 < opens.length ? opens[i + 1]!.index : body.length;
    const closeAt = closes.next(start);
    const closed = closeAt >= 0 && closeAt < next;
    let text = body.slice(start, closed ? closeAt : next);
    if (closed && text.endsWith(MINIMAX_NS)) text = text.slice(0, -MINIMAX_NS.length);
    const { list: entries, cut } = elements(text, 0);
    return { name: m.name.trim(), entries, closed, cut };
  });
  return list.length > 0 ? toCalls(list, regionClosed) : null;
}

const minimaxM3Region: RegionParser = (body, closed) => callsOf(parseMinimaxM3Calls(body, closed));

export const minimaxM3: Dialect = {
  name: "MiniMax-M3",
  calls: [[`${MINIMAX_NS}<tool_call>`, region(minimaxM3Region, [`${MINIMAX_NS}</tool_call>`], { valueStart: undefined })]],
  blocks: [
    ["<mm:think>", reasoning("</mm:think>")],
    ["</mm:think>", strayClose],
  ],
};
