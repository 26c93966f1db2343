// MiniMax-M3: every tag of a call is preceded by the namespace token `]<]minimax[>[`, and each
// parameter is an element named after its key, its value written as XML all the way down:
//   ]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name="NAME">]<]minimax[>[<city>Tokyo]<]minimax[>[</city>
//   ]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>
// An object is one child element per key, an array repeated `<item>` elements. The parser keeps each
// element's inner text verbatim and its children; the schema decides which one is the value
// (`convertTextEntry`), as a string parameter takes the inner text, tags and all.

import type { RawCall, TextEntry } from "./raw-call.ts";
import { toCalls, type CallText } from "./parse-xml-calls.ts";

export const MINIMAX_NS = "]<]minimax[>[";

const OPEN = /\]<\]minimax\[>\[<([^\s<>/"]+)>/y;
const INVOKE = /(?:\]<\]minimax\[>\[)?<invoke\s+name\s*=\s*"([^"]*)"\s*>/g;

/** Where the element `key` whose content starts at `from` closes (nested ones of the same name skipped), or -1. */
function closingTag(text: string, from: number, key: string): number {
  const open = `${MINIMAX_NS}<${key}>`;
  const close = `${MINIMAX_NS}</${key}>`;
  let depth = 0;
  for (let i = from; ; ) {
    const c = text.indexOf(close, i);
    if (c < 0) return -1;
    const o = text.indexOf(open, i);
    if (o >= 0 && o < c) {
      depth++;
      i = o + open.length;
    } else if (depth === 0) return c;
    else {
      depth--;
      i = c + close.length;
    }
  }
}

interface Elements {
  list: TextEntry[];
  /** The text was nothing but elements (and whitespace between them). */
  whole: boolean;
  /** The last element's closing tag never came. */
  cut: boolean;
}

function elements(text: string): Elements {
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
    list.push(element(key, text.slice(start, end < 0 ? text.length : end)));
    if (end < 0) return { list, whole: true, cut: true };
    i = end + MINIMAX_NS.length + key.length + 3;
  }
}

function element(key: string, raw: string): TextEntry {
  const inner = elements(raw);
  return inner.whole && (inner.list.length > 0 || raw.trim() === "") ? { key, raw, children: inner.list } : { key, raw };
}

/** The calls of a `]<]minimax[>[<tool_call>` region (the text between it and its closing tag). */
export function parseMinimaxM3Calls(body: string, regionClosed: boolean): RawCall[] | null {
  const opens = [...body.matchAll(INVOKE)];
  const list: CallText[] = opens.map((m, i) => {
    const start = m.index! + m[0].length;
    const next = i + 1 < opens.length ? opens[i + 1]!.index! : body.length;
    const closeAt = body.indexOf("</invoke>", start);
    const closed = closeAt >= 0 && closeAt < next;
    let text = body.slice(start, closed ? closeAt : next);
    if (closed && text.endsWith(MINIMAX_NS)) text = text.slice(0, -MINIMAX_NS.length);
    const { list: entries, cut } = elements(text);
    return { name: m[1]!.trim(), entries, closed, cut };
  });
  return list.length > 0 ? toCalls(list, regionClosed) : null;
}
