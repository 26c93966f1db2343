// What the XML-style dialects share: one tag per call, which carries the name, and one per
// parameter, which carries the key, each value the raw text between its tags (read later by the
// schema type, scoring/convert-text-value.ts). Qwen3-Coder, Seed-OSS, MiniMax-M2, DeepSeek's DSML,
// Muse Glimmer and Kimi K3 write it with their own tags (dialects/); GLM, Hunyuan, MiniCPM and
// MiniMax-M3 read their own layouts and share toCalls. A closing tag cut off by max_tokens is
// tolerated; the call is then reported as truncated.

import { ForwardSearch } from "../text/forward-search.ts";
import { openTags, type TagPattern } from "../text/open-tags.ts";
import { problem } from "../scoring/problems.ts";
import type { RawCall, TextEntry } from "../scoring/raw-call.ts";

export interface Segment {
  name: string;
  /** The opening tag's text after the name (`string="true"`). */
  attributes: string;
  body: string;
  closed: boolean;
}

/**
 * The most call tags one region is read for: twice the calls an answer keeps (MAX_CALLS_PER_ANSWER,
 * scan/call-list.ts), so that calls to undeclared tools among them cannot crowd out the kept ones.
 * A region of 10,000 `<function=a>` tags (issue 26) was 10,000 calls parsed and scored to be
 * dropped; past this many, the region's remaining text goes with it unread.
 */
export const CALLS_READ_PER_REGION = 256;

function segments(text: string, open: TagPattern, close: string, limit = Infinity): Segment[] {
  // One tag more than `limit`: where the last segment read ends.
  const opens = openTags(text, open, limit + 1);
  // Each opening tag looks for its closing tag from where it ends; the search resumes where the
  // last one stopped, so a text of opening tags with no closing one is read once, not once per tag.
  const closes = new ForwardSearch(text, close);
  return opens.slice(0, limit).map((m, i) => {
    const start = m.end;
    const next = i + 1 < opens.length ? opens[i + 1]!.index : text.length;
    const closeAt = closes.next(start);
    const closed = closeAt >= 0 && closeAt < next;
    return { name: m.name.trim(), attributes: m.attributes, body: text.slice(start, closed ? closeAt : next), closed };
  });
}

/** A parameter's value from the text between its tags and its opening tag's attributes. */
export type Value = (raw: string, attributes: string) => Omit<TextEntry, "key">;

export const verbatim: Value = (raw) => ({ raw });

/** The parameters of one call's text, and whether its last value was cut off. */
export function parameters(segment: Segment, open: TagPattern, close: string, value: Value): { entries: TextEntry[]; cut: boolean } {
  const entries: TextEntry[] = [];
  let cut = false;
  for (const p of segments(segment.body, open, close)) {
    entries.push({ key: p.name, ...value(p.body, p.attributes) });
    cut = !p.closed;
  }
  return { entries, cut };
}

export interface CallText {
  name: string;
  entries: TextEntry[];
  /** The call's closing tag was seen. */
  closed: boolean;
  /** Its last value was cut off. */
  cut: boolean;
}

/** Raw calls with the problems their tags show; `regionClosed`: the enclosing region was closed. */
export function toCalls(list: CallText[], regionClosed: boolean): RawCall[] {
  return list.map((c, i) => {
    const last = i === list.length - 1;
    const problems = [];
    if (last && !regionClosed && (!c.closed || c.cut)) {
      problems.push(problem("truncated", "the output stopped inside this call (max_tokens?)"));
    } else if (!c.closed) {
      problems.push(problem("missing_closing_tag", "a closing tag of this call is missing"));
    }
    return { name: c.name, arguments: { kind: "text" as const, entries: c.entries }, problems };
  });
}

/** The tags of a dialect that writes one tag per call and one per parameter. */
export interface CallTags {
  /** The call's opening tag, which carries the name. */
  call: TagPattern;
  callClose: string;
  /** A parameter's opening tag, which carries the key and what else it says about the value. */
  parameter: TagPattern;
  parameterClose: string;
  value: Value;
}

export function parseTaggedCalls(text: string, regionClosed: boolean, tags: CallTags): RawCall[] | null {
  const list = segments(text, tags.call, tags.callClose, CALLS_READ_PER_REGION).map((s) => ({
    name: s.name,
    closed: s.closed,
    ...parameters(s, tags.parameter, tags.parameterClose, tags.value),
  }));
  return list.length > 0 ? toCalls(list, regionClosed) : null;
}
