// The opening tags of the XML-style dialects (`<function=NAME>`, `<invoke name="NAME">`,
// `<|open|>call tool="NAME"…<|sep|>`), found by hand rather than by a regular expression: each
// tag is read left to right, and every search for a quote or a `>` resumes where the last one
// stopped, so finding all of a text's tags is linear in the text whatever it holds (an unclosed
// `<function=` repeated, a flood of spaces after `=`). Also whether the end of a stream may still
// grow into such a tag.

import { ForwardCharSearch, ForwardSearch, isRegexSpace } from "./forward-search.ts";

export interface OpenTag {
  /** Where the tag starts. */
  index: number;
  /** Just after the tag. */
  end: number;
  /** The name (or key) the tag carries, as written. */
  name: string;
  /** What else the tag says (`string="true"`, ` type="number"`), when the pattern keeps it. */
  attributes: string;
}

/** The text being read, with the forward searches its patterns share. */
export class TagText {
  private readonly searches = new Map<string, ForwardCharSearch>();
  private spaceFrom = -1;
  private spaceTo = -1;

  constructor(readonly text: string) {}

  /** The first index from `from` on holding one of `chars` (calls per `chars` must not go back). */
  next(chars: string, from: number): number {
    let s = this.searches.get(chars);
    if (!s) this.searches.set(chars, (s = new ForwardCharSearch(this.text, chars)));
    return s.next(from);
  }

  /** The index after the `\s` run at `from`; a run already walked is not walked again. */
  skipSpace(from: number): number {
    if (from >= this.spaceFrom && from <= this.spaceTo) return this.spaceTo;
    let i = from;
    while (i < this.text.length && isRegexSpace(this.text.charCodeAt(i))) i++;
    this.spaceFrom = from;
    this.spaceTo = i;
    return i;
  }
}

export interface TagPattern {
  /** The literal every tag starts with. */
  prefix: string;
  /** Reads the tag's rest from `at` (just after the prefix): its end, name and attributes, or null. */
  read(t: TagText, at: number): { end: number; name: string; attributes?: string } | null;
  /** Text that may stand right before the prefix and then belongs to the tag (MiniMax-M3's namespace). */
  lead?: string;
}

/** Finds the tags of one pattern from increasing positions of one text. */
export class OpenTagFinder {
  private readonly t: TagText;
  private readonly prefixes: ForwardSearch;

  constructor(
    text: string,
    private readonly pattern: TagPattern,
  ) {
    this.t = new TagText(text);
    this.prefixes = new ForwardSearch(text, pattern.prefix);
  }

  /** The first tag starting at or after `from` (a regex's `lastIndex`), or null. */
  next(from: number): OpenTag | null {
    const { t, pattern } = this;
    for (let p = this.prefixes.next(from); p >= 0; p = this.prefixes.next(p + 1)) {
      const read = pattern.read(t, p + pattern.prefix.length);
      if (!read) continue;
      const lead = pattern.lead;
      const index = lead && p - lead.length >= from && t.text.startsWith(lead, p - lead.length) ? p - lead.length : p;
      return { index, end: read.end, name: read.name, attributes: read.attributes ?? "" };
    }
    return null;
  }
}

/**
 * Every tag of `pattern` in `text`, left to right, none overlapping (as a global regex finds them);
 * the first `limit` of them when there are more.
 */
export function openTags(text: string, pattern: TagPattern, limit = Infinity): OpenTag[] {
  const out: OpenTag[] = [];
  const finder = new OpenTagFinder(text, pattern);
  for (let m = finder.next(0); m && out.length < limit; m = finder.next(m.end)) out.push(m);
  return out;
}

/**
 * `\s+ATTR\s*=\s*"VALUE"` from `at`, then `\s*>` (`tail: "close"`) or anything but `>` up to the
 * first `>` (`tail: "attributes"`, kept as the tag's attributes).
 */
export function readNamedTag(t: TagText, at: number, attr: string, tail: "close" | "attributes") {
  const text = t.text;
  let i = t.skipSpace(at);
  if (i === at || !text.startsWith(attr, i)) return null;
  i = t.skipSpace(i + attr.length);
  if (text[i] !== "=") return null;
  i = t.skipSpace(i + 1);
  if (text[i] !== '"') return null;
  const q = t.next('"', i + 1);
  if (q < 0) return null;
  const name = text.slice(i + 1, q);
  if (tail === "close") {
    const g = t.skipSpace(q + 1);
    return text[g] === ">" ? { end: g + 1, name } : null;
  }
  const g = t.next(">", q + 1);
  return g < 0 ? null : { end: g + 1, name, attributes: text.slice(q + 1, g) };
}

/**
 * `<TAG=NAME>` (a newline and spaces may come before the `>`) or `<TAG name="NAME">`: Qwen3-Coder's
 * `<function=…>` and `<parameter=…>`.
 */
export const equalsOrNamedTag = (prefix: string): TagPattern => ({
  prefix,
  read(t, at) {
    const text = t.text;
    if (text[at] !== "=") return readNamedTag(t, at, "name", "close");
    // `[^>\n]*` up to the first `>` or newline; after a newline only spaces may come before `>`.
    const k = t.next(">\n", at + 1);
    if (k < 0) return null;
    const name = text.slice(at + 1, k);
    if (text[k] === ">") return { end: k + 1, name };
    const g = t.skipSpace(k);
    return text[g] === ">" ? { end: g + 1, name } : null;
  },
});

/** `<TAG\s+ATTR="NAME"…<|sep|>` (Kimi K3): the attributes run to the first `<`, which must open `<|sep|>`. */
export const sepTag = (prefix: string, attr: string): TagPattern => ({
  prefix,
  read(t, at) {
    const text = t.text;
    const i = t.skipSpace(at);
    if (i === at || !text.startsWith(`${attr}="`, i)) return null;
    const q = t.next('"', i + attr.length + 2);
    if (q < 0) return null;
    const lt = t.next("<", q + 1);
    if (lt < 0 || !text.startsWith("<|sep|>", lt)) return null;
    return { end: lt + "<|sep|>".length, name: text.slice(i + attr.length + 2, q), attributes: text.slice(q + 1, lt) };
  },
});

/**
 * Whether `partial` (the text so far) may still grow into `<tag=NAME>` or `<tag name="NAME">`:
 * it is a prefix of the opening, or the opening followed by a name not yet closed.
 */
export function couldBecomeTag(partial: string, equals: string | null, named: string): boolean {
  if (partial.length >= 160) return false;
  if (equals && (equals.startsWith(partial) || (partial.startsWith(equals) && /^[^>\n<]*$/.test(partial.slice(equals.length))))) {
    return true;
  }
  const p = partial.replace(/\s*=\s*/g, "=").replace(/\s+/g, " ");
  return named.startsWith(p) || (p.startsWith(named) && /^[^"\n]*(?:" ?)?$/.test(p.slice(named.length)));
}

/**
 * Whether the text at `j` agrees with `open` as far as it goes: anything else (`<b>`, `<|im_end|>`)
 * can never become that opening, and is turned down before any slicing or matching.
 */
export function agreesWith(buf: string, j: number, open: string): boolean {
  const n = Math.min(open.length, buf.length - j);
  for (let i = 1; i < n; i++) if (buf.charCodeAt(j + i) !== open.charCodeAt(i)) return false;
  return true;
}
