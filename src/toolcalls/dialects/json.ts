// JSON calls (reference §1 and §2): bare objects and arrays at the start of the output or of a line
// (in prose only when they fit), FireFunction's ` functools[…]`, and JSON between the tags or
// tokens of the families whose only format of their own is that wrapper. The shapes inside are
// read by parse/decode-json-calls.ts; a family that wraps JSON in a new tag is one line here.

import { MAYBE, NO, skipSpace, type Candidate, type RegionParser, type ScanContext } from "./candidate.ts";
import { jsonStart, region, type Dialect } from "./dialect.ts";
import { identifier, pythonic } from "./pythonic.ts";
import { CALL_KEYS } from "../parse/decode-json-calls.ts";
import { parseJsonBody } from "../parse/parse-json-body.ts";

/** A region of JSON calls; `allowResponse`: the whole output is JSON, and `{"response": …}` is its content. */
export const jsonRegion: RegionParser = (body, _closed, spec, tools) =>
  // InternLM2 names its plugin channel before the JSON (internlm.ts).
  parseJsonBody(body.replace(/^\s*<\|plugin\|>/, ""), tools, spec.allowResponse === true);

export const json: Dialect = {
  name: "JSON between a family's tags: Granite, GigaChat, Apertus, Jamba, MiniMax-M1, Nemotron, generic wrappers",
  calls: [
    // Granite 3.x.
    ["<|tool_call|>", region(jsonRegion, [], { multi: true })],
    // GigaChat 3.1; GigaChat 3 opens a "function call" message.
    ["<|function_call|>", region(jsonRegion, [], { multi: false })],
    ["<|message_sep|>\n\nfunction call<|role_sep|>", region(jsonRegion, [], { multi: false })],
    // Apertus.
    ["<|tools_prefix|>", region(jsonRegion, ["<|tools_suffix|>"])],
    // Jamba (a list), MiniMax-M1 (one object per line).
    ["<tool_calls>", region(jsonRegion, ["</tool_calls>"])],
    // Nemotron.
    ["<TOOLCALL>", region(jsonRegion, ["</TOOLCALL>"])],
    // Granite-20B-FunctionCalling: several objects after one tag.
    ["<function_call>", region(jsonRegion, ["</function_call>"])],
    ["<tools>", region(jsonRegion, ["</tools>"])],
    ["<json>", region(jsonRegion, ["</json>"])],
    ["<JSON>", region(jsonRegion, ["</JSON>"])],
    ["<response>", region(jsonRegion, ["</response>"], { multi: false })],
  ],
  openers: [
    // After the literal call markers (30): `[{…}]` or `[f(…)]` at the start of a line, only
    // `[{…}]` (strictly) in the middle of one.
    { chars: "[", where: "lineStartOrObjectNext", order: 40, read: (buf, j, ctx) => bracket(buf, j, ctx) },
    { chars: "{", where: "anywhere", order: 60, read: (buf, j, ctx) => jsonObject(buf, j, ctx) },
    { chars: "f", where: "anywhere", order: 60, read: (buf, j, ctx) => functools(buf, j, ctx) },
  ],
};

/** The first key of an object starting at `i` (`{`); a call's first key is one of few. */
function firstKeyFits(buf: string, i: number, ctx: ScanContext): Candidate | true {
  let k = skipSpace(buf, i + 1);
  if (k >= buf.length) return ctx.eof ? NO : MAYBE;
  const q = buf[k]!;
  let key: string;
  if (q === '"' || q === "'") {
    let e = k + 1;
    const limit = Math.min(buf.length, k + 130);
    while (e < limit && buf[e] !== q) e += buf[e] === "\\" ? 2 : 1;
    if (e >= limit) return ctx.eof || e - k > 128 ? NO : MAYBE;
    key = buf.slice(k + 1, e);
    k = e + 1;
  } else {
    const id = identifier(buf, k);
    if (!id) return NO;
    if (!id.complete) return ctx.eof ? NO : MAYBE;
    key = id.name;
    k = id.end;
  }
  k = skipSpace(buf, k);
  if (k >= buf.length) return ctx.eof ? NO : MAYBE;
  if (buf[k] !== ":") return NO;
  if (CALL_KEYS.has(key) || (ctx.atBoundary && key === "response") || ctx.tools.isToolName(key)) return true;
  return NO;
}

/** A bare `{…}`: at the start of the output read leniently, after prose only when it fits (strict). */
export function jsonObject(buf: string, j: number, ctx: ScanContext): Candidate {
  const fits = firstKeyFits(buf, j, ctx);
  if (fits !== true) return fits;
  return {
    kind: "region",
    length: 0,
    spec: { parse: jsonRegion, close: [], reopen: [], valueStart: () => 0, strict: !ctx.atBoundary, allowResponse: ctx.atBoundary },
  };
}

/** `[{…}, …]` or `[f(a=1), …]` (pythonic.ts) at the start of the output or of a line. */
export function bracket(buf: string, j: number, ctx: ScanContext): Candidate {
  const k = skipSpace(buf, j + 1);
  if (k >= buf.length) return ctx.eof ? NO : MAYBE;
  if (buf[k] === "{") {
    const fits = firstKeyFits(buf, k, ctx);
    if (fits !== true) return fits;
    return {
      kind: "region",
      length: 0,
      spec: { parse: jsonRegion, close: [], reopen: [], valueStart: () => 0, strict: !ctx.atBoundary },
    };
  }
  return pythonic(buf, j, k, ctx);
}

/** FireFunction v2: ` functools[{…}]`, the word not inside another one. */
export function functools(buf: string, j: number, ctx: ScanContext): Candidate {
  if (!/[\w.]/.test(ctx.prev) && (buf.startsWith("functools[", j) || (!ctx.eof && buf.length - j < 10 && "functools[".startsWith(buf.slice(j))))) {
    if (buf.length - j < 10) return MAYBE;
    return { kind: "region", length: 9, spec: { parse: jsonRegion, close: [], reopen: [], valueStart: jsonStart } };
  }
  return NO;
}
