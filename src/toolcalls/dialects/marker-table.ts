// The scanner's tables, built from the dialects' markers (registry.ts): what each literal opening
// marker opens (a call region, a reasoning block, a token to drop), the closing markers of call
// regions when no call is open, and the tries that read them.

import { MAYBE, NO, type Candidate } from "./candidate.ts";
import { drop, type Build } from "./dialect.ts";
import { DIALECTS } from "./registry.ts";

/** Literal markers that open a call region. */
export const CALL_MARKERS: Array<[string, Build]> = DIALECTS.flatMap((d) => d.calls ?? []);

/** Literal reasoning markers, the closing markers of blocks the template opened, and framing to drop. */
export const REASONING_MARKERS: Array<[string, Build]> = DIALECTS.flatMap((d) => d.blocks ?? []);

/**
 * The closing markers of call regions, when no call is open. A special token (`<|tool_call_end|>`)
 * is never meant for the reader and is dropped wherever it is; a tag (`</tool_call>`) only right
 * after a call or at the start of the output, where it ends a call whose opening the template or
 * the model left out (Qwen3-Coder's `<function=…>…</function>\n</tool_call>`), and is text elsewhere.
 */
const CALL_CLOSERS = [
  ...new Set([
    "</function>",
    ...CALL_MARKERS.flatMap(([open, build]) => {
      const c = build(open);
      return c.kind === "region" ? c.spec.close : [];
    }),
  ]),
];
const SPECIAL_TOKEN = /^(?:<\|[^<>]*\|>|<｜[^<>]*｜>|\[[A-Z_]+\])$/;
export const STRAY_TOKEN_CLOSERS: Array<[string, Build]> = CALL_CLOSERS.filter((c) => SPECIAL_TOKEN.test(c)).map((c) => [c, drop]);
export const STRAY_TAG_CLOSERS: Array<[string, Build]> = CALL_CLOSERS.filter((c) => !SPECIAL_TOKEN.test(c)).map((c) => [c, drop]);

/** A model's special token (`<|…|>`, `<｜…｜>`, `[TOOL_CALLS]`), as opposed to a tag or a header. */
export const isSpecialToken = (marker: string): boolean => SPECIAL_TOKEN.test(marker);

/** A table's markers as a trie, so a position costs at most the longest marker's length to read. */
export interface MarkerTrie {
  next: Map<number, MarkerTrie>;
  /** The marker that ends here. */
  entry?: [string, Build];
}

export function trieOf(table: Array<[string, Build]>): MarkerTrie {
  const root: MarkerTrie = { next: new Map() };
  for (const entry of table) {
    let node = root;
    for (let i = 0; i < entry[0].length; i++) {
      const c = entry[0].charCodeAt(i);
      let child = node.next.get(c);
      if (!child) node.next.set(c, (child = { next: new Map() }));
      node = child;
    }
    node.entry ??= entry;
  }
  return root;
}

/** The longest marker of `table` opening at `j`, "maybe" while the text may still grow into one. */
export function literal(buf: string, j: number, eof: boolean, trie: MarkerTrie): Candidate {
  let node: MarkerTrie | undefined = trie;
  let best: [string, Build] | undefined;
  let i = j;
  for (; i < buf.length; i++) {
    node = node.next.get(buf.charCodeAt(i));
    if (!node) break;
    if (node.entry) best = node.entry;
  }
  // The text ended inside a longer marker: it may still become one.
  if (node && i === buf.length && !eof && node.next.size > 0) return MAYBE;
  return best ? best[1](best[0]) : NO;
}

export const REASONING_TRIE = trieOf(REASONING_MARKERS);
export const CALL_TRIE = trieOf(CALL_MARKERS);
export const STRAY_TOKEN_TRIE = trieOf(STRAY_TOKEN_CLOSERS);
export const STRAY_TAG_TRIE = trieOf(STRAY_TAG_CLOSERS);
