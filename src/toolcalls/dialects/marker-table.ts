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

/**
 * A table's markers as a compressed trie: each edge carries the run of characters up to the next
 * branch or marker end, compared at once (a 22-character marker is one comparison, not 22 map
 * lookups: a flood of one long marker spent most of its time walking it), so a position costs at
 * most the longest marker's length to read.
 */
export interface MarkerTrie {
  /** The edges by their first character: ASCII in an array (most text is ASCII), the rest in a map. */
  ascii: Array<TrieEdge | undefined>;
  next: Map<number, TrieEdge>;
  /** How many edges leave this node. */
  size: number;
  /** The marker that ends here. */
  entry?: [string, Build];
  /**
   * What that marker opens, built once: a build depends only on the marker, and a flood of one
   * marker built a new candidate and region spec per repeat (frozen, since every finding shares it).
   */
  built?: Candidate;
}

interface TrieEdge {
  /** The characters along the edge, the first one included. */
  label: string;
  node: MarkerTrie;
}

export function trieOf(table: Array<[string, Build]>): MarkerTrie {
  // A plain trie first, one character per node.
  interface Plain {
    next: Map<string, Plain>;
    entry?: [string, Build];
  }
  const root: Plain = { next: new Map() };
  for (const entry of table) {
    let node = root;
    for (const c of entry[0].split("")) {
      let child = node.next.get(c);
      if (!child) node.next.set(c, (child = { next: new Map() }));
      node = child;
    }
    node.entry ??= entry;
  }
  // Then each chain without a branch or a marker end folded into one edge.
  const compress = (plain: Plain): MarkerTrie => {
    const out: MarkerTrie = { ascii: new Array<TrieEdge | undefined>(128).fill(undefined), next: new Map(), size: plain.next.size };
    if (plain.entry) out.entry = plain.entry;
    for (const [c, child] of plain.next) {
      let label = c;
      let node = child;
      while (!node.entry && node.next.size === 1) {
        const [[d, only]] = [...node.next] as [[string, Plain]];
        label += d;
        node = only;
      }
      const code = c.charCodeAt(0);
      const edge = { label, node: compress(node) };
      if (code < 128) out.ascii[code] = edge;
      else out.next.set(code, edge);
    }
    return out;
  };
  return compress(root);
}

/** The longest marker of `table` opening at `j`, "maybe" while the text may still grow into one. */
export function literal(buf: string, j: number, eof: boolean, trie: MarkerTrie): Candidate {
  let node = trie;
  let best: MarkerTrie | undefined;
  let i = j;
  for (;;) {
    if (i >= buf.length) {
      // The text ended where a longer marker may go on: it may still become one.
      if (!eof && node.size > 0) return MAYBE;
      break;
    }
    const code = buf.charCodeAt(i);
    const edge = code < 128 ? node.ascii[code] : node.next.get(code);
    if (!edge) break;
    const label = edge.label;
    if (!buf.startsWith(label, i)) {
      // The text ended inside the edge, agreeing with it so far.
      if (!eof && buf.length - i < label.length && label.startsWith(buf.slice(i))) return MAYBE;
      break;
    }
    i += label.length;
    node = edge.node;
    if (node.entry) best = node;
  }
  if (!best) return NO;
  return (best.built ??= frozen(best.entry![1](best.entry![0])));
}

/**
 * The characters that may come second in a marker of `trie` starting with `first` (none: no marker
 * starts with it; null: `first` alone is a marker, so whatever follows may matter).
 */
export function secondChars(trie: MarkerTrie, first: number): number[] | null {
  const edge = first < 128 ? trie.ascii[first] : trie.next.get(first);
  if (!edge) return [];
  if (edge.label.length > 1) return [edge.label.charCodeAt(1)];
  if (edge.node.entry) return null;
  return [...edge.node.ascii.flatMap((e, code) => (e ? [code] : [])), ...edge.node.next.keys()];
}

/** A candidate shared by every place its marker is found: nothing may change it. */
function frozen(candidate: Candidate): Candidate {
  if (candidate.kind === "region") {
    Object.freeze(candidate.spec.close);
    Object.freeze(candidate.spec.reopen);
    Object.freeze(candidate.spec);
  }
  return Object.freeze(candidate);
}

export const REASONING_TRIE = trieOf(REASONING_MARKERS);
export const CALL_TRIE = trieOf(CALL_MARKERS);
export const STRAY_TOKEN_TRIE = trieOf(STRAY_TOKEN_CLOSERS);
export const STRAY_TAG_TRIE = trieOf(STRAY_TAG_CLOSERS);
