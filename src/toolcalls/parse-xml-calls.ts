// XML-style dialects, whose parameter values are raw text read by the schema type:
// - Qwen3-Coder / Seed-OSS: <function=NAME><parameter=KEY>VALUE</parameter></function>
//   (also <function name="NAME"><parameter name="KEY">);
// - MiniMax-M2: <invoke name="NAME"><parameter name="KEY">VALUE</parameter></invoke>, and the same
//   with a namespace: DeepSeek V3.2/V4 DSML (<｜DSML｜invoke …>, with string="true|false"), Muse
//   Glimmer (<atem:invoke …>);
// - MiniCPM 5: <function name="NAME"><param name="KEY">VALUE or <![CDATA[VALUE]]></param></function>;
// - GLM-4.5+: NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>;
// - Hunyuan v3: the same in `:opensource` tags, NAME<tool_sep:opensource> first, one call per
//   <tool_call:opensource>…</tool_call:opensource>.
// Values are kept as written, except for the format's own newlines: Qwen3-Coder (and Qwen3.5,
// Nemotron 3) write `<parameter=KEY>\nVALUE\n</parameter>`, everyone else writes the value alone.
// A closing tag cut off by max_tokens is tolerated; the call is then reported as truncated.

import { ForwardSearch, skipRegexSpace } from "./forward-search.ts";
import { OpenTagFinder, equalsOrNamedTag, openTags, readNamedTag, type TagPattern } from "./open-tags.ts";
import { problem } from "./problems.ts";
import type { RawCall, TextEntry } from "./raw-call.ts";

interface Segment {
  name: string;
  /** The opening tag's text after the name (`string="true"`). */
  attributes: string;
  body: string;
  closed: boolean;
}

function segments(text: string, open: TagPattern, close: string): Segment[] {
  const opens = openTags(text, open);
  // Each opening tag looks for its closing tag from where it ends; the search resumes where the
  // last one stopped, so a text of opening tags with no closing one is read once, not once per tag.
  const closes = new ForwardSearch(text, close);
  return opens.map((m, i) => {
    const start = m.end;
    const next = i + 1 < opens.length ? opens[i + 1]!.index : text.length;
    const closeAt = closes.next(start);
    const closed = closeAt >= 0 && closeAt < next;
    return { name: m.name.trim(), attributes: m.attributes, body: text.slice(start, closed ? closeAt : next), closed };
  });
}

/** Qwen3-Coder's `<parameter=KEY>\nVALUE\n</parameter>`: the newline on each side is the format's. */
const formatNewlines = (raw: string): string => raw.replace(/^\r?\n/, "").replace(/\r?\n$/, "");

/** A parameter's value from the text between its tags and its opening tag's attributes. */
export type Value = (raw: string, attributes: string) => Omit<TextEntry, "key">;

export const verbatim: Value = (raw) => ({ raw });
const qwenValue: Value = (raw) => ({ raw: formatNewlines(raw) });

function parameters(segment: Segment, open: TagPattern, close: string, value: Value): { entries: TextEntry[]; cut: boolean } {
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
  const list = segments(text, tags.call, tags.callClose).map((s) => ({
    name: s.name,
    closed: s.closed,
    ...parameters(s, tags.parameter, tags.parameterClose, tags.value),
  }));
  return list.length > 0 ? toCalls(list, regionClosed) : null;
}

const QWEN_FUNCTION = equalsOrNamedTag("<function");
const QWEN_PARAMETER = equalsOrNamedTag("<parameter");

/**
 * Qwen3-Coder bodies; `regionClosed` says whether the enclosing region saw its closing tag.
 * `seed`: Seed-OSS, whose values have no newlines of the format around them.
 */
export function parseQwenXmlCalls(text: string, regionClosed: boolean, seed = false): RawCall[] | null {
  return parseTaggedCalls(text, regionClosed, {
    call: QWEN_FUNCTION,
    callClose: "</function>",
    parameter: QWEN_PARAMETER,
    parameterClose: "</parameter>",
    value: seed ? verbatim : qwenValue,
  });
}

/** The parameters of one `<function=NAME>` region whose header already gave the name. */
export function parseQwenXmlParameters(name: string, body: string, closed: boolean): RawCall | null {
  const params = parameters({ name, attributes: "", body, closed }, QWEN_PARAMETER, "</parameter>", qwenValue);
  if (params.entries.length === 0 && body.trim() !== "") return null;
  return toCalls([{ name, closed, ...params }], closed)[0]!;
}

/** A value verbatim, with DSML's `string="true"` (the value is the string itself) or `string="false"` (it is JSON). */
const invokeValue: Value = (raw, attributes) => {
  const string = /\bstring\s*=\s*"(true|false)"/.exec(attributes)?.[1];
  return string === undefined ? { raw } : { raw, hint: string === "true" ? "string" : "json" };
};

/**
 * MiniMax-M2 `<invoke name=…><parameter name=…>`, or the same tags in a namespace: `｜DSML｜`
 * (DeepSeek V3.2/V4), `atem:` (Muse Glimmer).
 */
export function parseInvokeCalls(text: string, regionClosed: boolean, ns = ""): RawCall[] | null {
  return parseTaggedCalls(text, regionClosed, {
    call: { prefix: `<${ns}invoke`, read: (t, at) => readNamedTag(t, at, "name", "close") },
    callClose: `</${ns}invoke>`,
    parameter: { prefix: `<${ns}parameter`, read: (t, at) => readNamedTag(t, at, "name", "attributes") },
    parameterClose: `</${ns}parameter>`,
    value: invokeValue,
  });
}

export const parseMinimaxCalls = (text: string, regionClosed: boolean): RawCall[] | null => parseInvokeCalls(text, regionClosed);

const MINICPM_PARAMETER: TagPattern = { prefix: "<param", read: (t, at) => readNamedTag(t, at, "name", "close") };
const CDATA_OPEN = "<![CDATA[";

/** MiniCPM 5 parameters of a `<function name="NAME">` region: `<param name="KEY">`, a CDATA value verbatim. */
export function parseMiniCpmParameters(name: string, body: string, closed: boolean): RawCall | null {
  const entries: TextEntry[] = [];
  let cut = false;
  const tags = new OpenTagFinder(body, MINICPM_PARAMETER);
  // Both closing searches only move forward: each value starts after the last one ended.
  const cdataEnds = new ForwardSearch(body, "]]>");
  const paramCloses = new ForwardSearch(body, "</param>");
  for (let m = tags.next(0); m; ) {
    let start = m.end;
    let end: number;
    let close: number;
    if (body.startsWith(CDATA_OPEN, start)) {
      // The value may hold `</param>` itself: it ends at `]]>`.
      start += CDATA_OPEN.length;
      const cdataEnd = cdataEnds.next(start);
      end = cdataEnd < 0 ? body.length : cdataEnd;
      close = cdataEnd < 0 ? -1 : paramCloses.next(cdataEnd);
    } else {
      close = paramCloses.next(start);
      end = close < 0 ? body.length : close;
    }
    entries.push({ key: m.name.trim(), raw: body.slice(start, end) });
    cut = close < 0;
    if (close < 0) break;
    m = tags.next(close + "</param>".length);
  }
  if (entries.length === 0 && body.trim() !== "") return null;
  return toCalls([{ name, closed, entries, cut }], closed)[0]!;
}

/** GLM's tags, or Hunyuan's variant of them (`<arg_key:opensource>`), and what ends the name. */
interface GlmTags {
  key: string;
  keyClose: string;
  value: string;
  valueClose: string;
  sep?: string;
}

const glmTags = (suffix: string, sep?: string): GlmTags => ({
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
function glmCallText(text: string, tags: GlmTags): CallText | null {
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

const HY = ":opensource";
const HY_CALL = `<tool_call${HY}>`;
const HY_CALL_CLOSE = `</tool_call${HY}>`;
const HY_TAGS = glmTags(HY, `<tool_sep${HY}>`);

/**
 * Hunyuan v3: `<tool_call:opensource>NAME<tool_sep:opensource>\n<arg_key:opensource>KEY</arg_key:opensource>\n
 * <arg_value:opensource>VALUE</arg_value:opensource>\n…</tool_call:opensource>`, several inside
 * `<tool_calls:opensource>`, or the body of one `<tool_call:opensource>` region. Values are written
 * alone (a newline after `</arg_value:opensource>` is the format's, one inside is the value's).
 */
export function parseHunyuanCalls(body: string, regionClosed: boolean): RawCall[] | null {
  const parts = body.includes(HY_CALL) ? body.split(HY_CALL).slice(1) : [body];
  const list: CallText[] = [];
  for (const part of parts) {
    const end = part.indexOf(HY_CALL_CLOSE);
    const call = glmCallText(end < 0 ? part : part.slice(0, end), HY_TAGS);
    if (!call) return null;
    list.push({ ...call, closed: end >= 0 || (parts.length === 1 && regionClosed) });
  }
  return list.length > 0 ? toCalls(list, regionClosed) : null;
}
