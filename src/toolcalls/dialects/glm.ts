// GLM-4.5+ (GLM-4.6, 4.7): NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>… inside Hermes'
// <tool_call> (auto-body.ts reads a body that is none of the others as GLM's). Values are raw
// text read by the schema type. Hunyuan writes the same layout in tags of its own (hunyuan.ts).

import { toCalls, type CallText } from "../parse/tagged-calls.ts";
import type { RawCall, TextEntry } from "../scoring/raw-call.ts";
import { ForwardSearch, skipRegexSpace } from "../text/forward-search.ts";

/** GLM's tags, or Hunyuan's variant of them (`<arg_key:opensource>`), and what ends the name. */
export interface GlmTags {
  key: string;
  keyClose: string;
  value: string;
  valueClose: string;
  sep?: string;
}

export const glmTags = (suffix: string, sep?: string): GlmTags => ({
  key: `<arg_key${suffix}>`,
  keyClose: `</arg_key${suffix}>`,
  value: `<arg_value${suffix}>`,
  valueClose: `</arg_value${suffix}>`,
  sep,
});

const GLM = glmTags("");

/**
 * The key/value pairs of a GLM call, as the global regex
 * `<arg_key>([\s\S]*?)</arg_key>\s*<arg_value>([\s\S]*?)(</arg_value>|$)` would find them, in one
 * pass: a key runs to the first `</arg_key>` that a `<arg_value>` follows (spaces between), a value
 * to its `</arg_value>` or the end (`cut`). Every search resumes where the last one stopped.
 */
function glmPairs(text: string, tags: GlmTags): { entries: TextEntry[]; cut: boolean } {
  const entries: TextEntry[] = [];
  let cut = false;
  const keys = new ForwardSearch(text, tags.key);
  const keyCloses = new ForwardSearch(text, tags.keyClose);
  const valueCloses = new ForwardSearch(text, tags.valueClose);
  // The first `</arg_key>` followed by `<arg_value>` from `pairFrom` on (-1: none at all).
  let pairFrom = -1;
  let pairAt = -1;
  const pairCloseFrom = (from: number): number => {
    if (pairFrom >= 0 && from >= pairFrom && (pairAt < 0 || pairAt >= from)) return pairAt;
    pairFrom = from;
    for (let c = keyCloses.next(from); c >= 0; c = keyCloses.next(c + 1)) {
      const v = skipRegexSpace(text, c + tags.keyClose.length);
      if (text.startsWith(tags.value, v)) return (pairAt = c);
    }
    return (pairAt = -1);
  };
  for (let from = 0; ; ) {
    const k = keys.next(from);
    if (k < 0) break;
    const keyStart = k + tags.key.length;
    const c = pairCloseFrom(keyStart);
    // No pair can start here, nor at any later key: nothing closes a key with a value after it.
    if (c < 0) break;
    const valueStart = skipRegexSpace(text, c + tags.keyClose.length) + tags.value.length;
    const close = valueCloses.next(valueStart);
    entries.push({ key: text.slice(keyStart, c).trim(), raw: text.slice(valueStart, close < 0 ? text.length : close) });
    cut = close < 0;
    if (close < 0) break;
    from = close + tags.valueClose.length;
  }
  return { entries, cut };
}

/** GLM's NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>…, as the call's text. */
export function glmCallText(text: string, tags: GlmTags): CallText | null {
  const first = text.indexOf(tags.key);
  const head = first < 0 ? text : text.slice(0, first);
  const at = tags.sep === undefined ? -1 : head.indexOf(tags.sep);
  const name = (at < 0 ? head : head.slice(0, at)).trim();
  if (!/^[\w.\-]+$/.test(name)) return null;
  const { entries, cut } = glmPairs(text, tags);
  if (first >= 0 && entries.length === 0) return null;
  return { name, entries, closed: true, cut };
}

export function parseGlmCall(text: string, regionClosed: boolean): RawCall | null {
  const call = glmCallText(text, GLM);
  return call ? toCalls([call], regionClosed)[0]! : null;
}
