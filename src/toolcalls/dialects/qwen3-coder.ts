// Qwen3-Coder (and Qwen3.5, Nemotron 3): <function=NAME><parameter=KEY>\nVALUE\n</parameter></function>,
// also written <function name="NAME"><parameter name="KEY">, usually inside Hermes' <tool_call>
// (auto-body.ts), sometimes without it: then `<function=NAME>` opens a region of its own, whose body
// may also be JSON (Functionary v3.1) or MiniCPM 5's <param> elements (minicpm.ts). Values are raw
// text read by the schema type, kept as written but for the newline on each side, which is the
// format's (Seed-OSS, seed-oss.ts, writes none).

import { MAYBE, NO, type Candidate, type RegionParser } from "./candidate.ts";
import { callsOf, jsonStart, type Dialect } from "./dialect.ts";
import { parseMiniCpmParameters } from "./minicpm.ts";
import { namedJsonCall } from "../parse/decode-json-calls.ts";
import { parameters, parseTaggedCalls, toCalls, verbatim, type Value } from "../parse/tagged-calls.ts";
import type { RawCall } from "../scoring/raw-call.ts";
import { agreesWith, couldBecomeTag, equalsOrNamedTag } from "../text/open-tags.ts";

/** Qwen3-Coder's `<parameter=KEY>\nVALUE\n</parameter>`: the newline on each side is the format's. */
const formatNewlines = (raw: string): string => raw.replace(/^\r?\n/, "").replace(/\r?\n$/, "");

const qwenValue: Value = (raw) => ({ raw: formatNewlines(raw) });

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

/** The body of a `<function=NAME>` region: JSON arguments, MiniCPM's `<param>`s, or Qwen3-Coder's `<parameter>`s. */
const functionTagRegion: RegionParser = (body, closed, spec) => {
  const name = spec.name ?? "";
  if (/^\s*[{"]/.test(body)) return callsOf(namedJsonCall(name, body));
  // MiniCPM 5 writes `<param name="KEY">`, Qwen3-Coder (without its <tool_call>) `<parameter=KEY>`.
  if (/<param\s+name\s*=/.test(body)) return callsOf(parseMiniCpmParameters(name, body, closed));
  return callsOf(parseQwenXmlParameters(name, body, closed));
};

const FUNCTION_CLOSE: readonly string[] = Object.freeze(["</function>"]);
const FUNCTION_REOPEN: readonly string[] = Object.freeze(["<function=", "<function "]);

export const qwen3Coder: Dialect = {
  name: "Qwen3-Coder, Qwen3.5, Nemotron 3, Functionary v3.1 (without <tool_call>)",
  // After the literal call markers (30).
  openers: [{ chars: "<", where: "anywhere", order: 40, call: (buf, j, eof) => functionTag(buf, j, eof) }],
};

/** `<function=NAME>`, `<function name="NAME">` (Functionary v3.1, Hermes; body JSON or XML). */
export function functionTag(buf: string, j: number, eof: boolean): Candidate {
  if (!agreesWith(buf, j, "<function")) return NO;
  const m = /^<function(?:=([^>\n<]{1,128})>|\s+name\s*=\s*"([^"\n]{1,128})"\s*>)/.exec(buf.slice(j, j + 160));
  if (m) {
    const name = (m[1] ?? m[2])!.trim();
    return {
      kind: "region",
      length: m[0].length,
      spec: { parse: functionTagRegion, close: FUNCTION_CLOSE, reopen: FUNCTION_REOPEN, valueStart: jsonStart, name },
    };
  }
  if (eof) return NO;
  return couldBecomeTag(buf.slice(j, j + 160), "<function=", "<function name=\"") ? MAYBE : NO;
}
