// MiniMax-M2: <minimax:tool_call><invoke name="NAME"><parameter name="KEY">VALUE</parameter></invoke>
// …</minimax:tool_call>, or the <invoke> elements without the outer tag.
// The same invoke/parameter tags in a namespace are DeepSeek's DSML (deepseek.ts) and Muse
// Glimmer's (muse.ts), read by parseInvokeCalls here. Values are raw text read by the schema type.

import { MAYBE, NO, type Candidate, type RegionParser } from "./candidate.ts";
import { callsOf, region, type Dialect } from "./dialect.ts";
import { parseTaggedCalls, type Value } from "../parse/tagged-calls.ts";
import type { RawCall } from "../scoring/raw-call.ts";
import { agreesWith, couldBecomeTag, readNamedTag } from "../text/open-tags.ts";

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

/** A MiniMax-M2 region; one that `</invoke>` closed (`closeInBody`) gets it back, as its body's own closing tag. */
const minimaxRegion: RegionParser = (body, closed, spec) =>
  callsOf(parseMinimaxCalls(spec.closeInBody && closed ? body + spec.close[0] : body, closed));

export const minimax: Dialect = {
  name: "MiniMax-M2",
  calls: [["<minimax:tool_call>", region(minimaxRegion, ["</minimax:tool_call>"], { valueStart: undefined })]],
  // After the literal call markers (30) and `<function=` (qwen3-coder.ts, 40).
  openers: [{ chars: "<", where: "anywhere", order: 41, call: (buf, j, eof) => invokeTag(buf, j, eof) }],
};

/** MiniMax without its outer tag: <invoke name="NAME">…</invoke>. */
export function invokeTag(buf: string, j: number, eof: boolean): Candidate {
  if (!agreesWith(buf, j, "<invoke")) return NO;
  const head = buf.slice(j, j + 160);
  if (/^<invoke\s+name\s*=\s*"[^"\n]{1,128}"\s*>/.test(head)) {
    return { kind: "region", length: 0, spec: { parse: minimaxRegion, close: ["</invoke>"], reopen: [], closeInBody: true } };
  }
  if (!eof && couldBecomeTag(head, null, "<invoke name=\"")) return MAYBE;
  return NO;
}
