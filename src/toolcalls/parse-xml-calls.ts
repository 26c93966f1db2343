// XML-style dialects, whose parameter values are raw text read by the schema type:
// - Qwen3-Coder / Seed-OSS: <function=NAME><parameter=KEY>VALUE</parameter></function>
//   (also <function name="NAME"><parameter name="KEY">);
// - MiniMax-M2: <invoke name="NAME"><parameter name="KEY">VALUE</parameter></invoke>;
// - GLM-4.5+: NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>.
// A closing tag cut off by max_tokens is tolerated; the call is then reported as truncated.

import { problem } from "./problems.ts";
import type { RawCall } from "./raw-call.ts";

interface Segment {
  name: string;
  body: string;
  closed: boolean;
}

function segments(text: string, open: RegExp, close: string): Segment[] {
  const out: Segment[] = [];
  const opens = [...text.matchAll(open)];
  opens.forEach((m, i) => {
    const start = m.index! + m[0].length;
    const next = i + 1 < opens.length ? opens[i + 1]!.index! : text.length;
    const closeAt = text.indexOf(close, start);
    const closed = closeAt >= 0 && closeAt < next;
    out.push({
      name: (m[1] ?? m[2] ?? "").trim(),
      body: text.slice(start, closed ? closeAt : next),
      closed,
    });
  });
  return out;
}

function parameters(segment: Segment, open: RegExp, close: string): { entries: Array<{ key: string; raw: string }>; cut: boolean } {
  const entries: Array<{ key: string; raw: string }> = [];
  let cut = false;
  for (const p of segments(segment.body, open, close)) {
    entries.push({ key: p.name, raw: p.body });
    cut = !p.closed;
  }
  return { entries, cut };
}

function toCalls(list: Array<{ name: string; entries: Array<{ key: string; raw: string }>; closed: boolean; cut: boolean }>, regionClosed: boolean): RawCall[] {
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

const QWEN_FUNCTION = /<function(?:=([^>\n]*)|\s+name\s*=\s*"([^"]*)")\s*>/g;
const QWEN_PARAMETER = /<parameter(?:=([^>\n]*)|\s+name\s*=\s*"([^"]*)")\s*>/g;

/** Qwen3-Coder bodies; `regionClosed` says whether the enclosing region saw its closing tag. */
export function parseQwenXmlCalls(text: string, regionClosed: boolean): RawCall[] | null {
  const list = segments(text, QWEN_FUNCTION, "</function>").map((s) => ({ name: s.name, closed: s.closed, ...parameters(s, QWEN_PARAMETER, "</parameter>") }));
  return list.length > 0 ? toCalls(list, regionClosed) : null;
}

/** The parameters of one `<function=NAME>` region whose header already gave the name. */
export function parseQwenXmlParameters(name: string, body: string, closed: boolean): RawCall | null {
  const params = parameters({ name, body, closed }, QWEN_PARAMETER, "</parameter>");
  if (params.entries.length === 0 && body.trim() !== "") return null;
  return toCalls([{ name, closed, ...params }], closed)[0]!;
}

const MINIMAX_INVOKE = /<invoke\s+name\s*=\s*"([^"]*)"\s*>/g;
const MINIMAX_PARAMETER = /<parameter\s+name\s*=\s*"([^"]*)"\s*>/g;

export function parseMinimaxCalls(text: string, regionClosed: boolean): RawCall[] | null {
  const list = segments(text, MINIMAX_INVOKE, "</invoke>").map((s) => ({ name: s.name, closed: s.closed, ...parameters(s, MINIMAX_PARAMETER, "</parameter>") }));
  return list.length > 0 ? toCalls(list, regionClosed) : null;
}

export function parseGlmCall(text: string, regionClosed: boolean): RawCall | null {
  const first = text.indexOf("<arg_key>");
  const name = (first < 0 ? text : text.slice(0, first)).trim();
  if (!/^[\w.\-]+$/.test(name)) return null;
  const entries: Array<{ key: string; raw: string }> = [];
  let cut = false;
  const pair = /<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)(<\/arg_value>|$)/g;
  for (const m of text.matchAll(pair)) {
    entries.push({ key: m[1]!.trim(), raw: m[2]! });
    cut = m[3] === "";
  }
  if (first >= 0 && entries.length === 0) return null;
  return toCalls([{ name, entries, closed: true, cut }], regionClosed)[0]!;
}
