// Pythonic calls (Llama 3.2+, Llama 4, LFM2, OLMo 3, BFCL-style models): `[get_weather(city='Paris'),
// math.factorial(number=5)]` or a bare `get_weather(city="Paris")`, values as Python literals
// (json/python-literal.ts). Like BFCL's decoder it tolerates a missing `[` or `]`; text cut off by
// max_tokens closes at the end and is reported as truncated. Found bare at the start of the output
// (any name) or of a line (a declared name only), or inside the regions of auto-body.ts.

import { MAYBE, NO, type Candidate, type RegionParser, type ScanContext } from "./candidate.ts";
import type { Dialect } from "./dialect.ts";
import { functionaryFirstLine } from "./functionary.ts";
import { jsonObject, setEntry, type JsonEntry, type JsonNode } from "../json/json-node.ts";
import { EndOfText, NotPython, PythonReader } from "../json/python-literal.ts";
import { problem } from "../scoring/problems.ts";
import type { RawCall, RegionParse } from "../scoring/raw-call.ts";
import type { ToolSet } from "../scoring/tool-set.ts";

export interface PythonArgument {
  /** null for a positional argument. */
  key: string | null;
  value: JsonNode;
}

export interface PythonCall {
  name: string;
  args: PythonArgument[];
  truncated: boolean;
}

const NAME = /[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*/y;

function readName(r: PythonReader): string {
  r.skipSpace();
  NAME.lastIndex = r.pos;
  const m = NAME.exec(r.text);
  if (!m) throw new NotPython();
  r.pos += m[0].length;
  return m[0];
}

function readCall(r: PythonReader): PythonCall {
  const name = readName(r);
  r.skipSpace();
  if (r.text[r.pos] !== "(") throw new NotPython();
  r.pos++;
  const args: PythonArgument[] = [];
  const truncatedBefore = r.truncated;
  try {
    for (;;) {
      r.skipSpace();
      r.need();
      if (r.text[r.pos] === ")") {
        r.pos++;
        break;
      }
      args.push(readArgument(r));
      r.skipSpace();
      r.need();
      const c = r.text[r.pos];
      if (c === ",") r.pos++;
      else if (c !== ")") throw new NotPython();
    }
  } catch (e) {
    if (!(e instanceof EndOfText)) throw e;
  }
  return { name, args, truncated: r.truncated && !truncatedBefore };
}

function readArgument(r: PythonReader): PythonArgument {
  const m = /[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)/y;
  m.lastIndex = r.pos;
  const kw = m.exec(r.text);
  if (kw) {
    r.pos += kw[0].length;
    const key = kw[0].slice(0, kw[0].indexOf("=")).trim();
    return { key, value: valueOrCutOff(r, 0) };
  }
  return { key: null, value: valueOrCutOff(r, 0) };
}

/** A value that may be cut off at the very start: then the argument is dropped with the rest. */
function valueOrCutOff(r: PythonReader, depth: number): JsonNode {
  r.skipSpace();
  r.need();
  return r.value(depth);
}

/**
 * Reads a whole text as pythonic calls. Returns null unless the entire text (after trimming) is
 * calls, optionally in one list.
 */
export function parsePythonicCalls(input: string): PythonCall[] | null {
  const text = input.trim();
  const r = new PythonReader(text);
  const calls: PythonCall[] = [];
  try {
    const list = r.peek() === "[";
    if (list) r.pos++;
    for (;;) {
      const c = r.peek();
      if (c === "" || (list && c === "]")) break;
      calls.push(readCall(r));
      if (r.truncated) break;
      const sep = r.peek();
      if (sep === "," || sep === ";") r.pos++;
      else if (sep === "]" || sep === "") break;
      else if (!/[A-Za-z_]/.test(sep)) return null;
    }
    if (r.truncated) return calls.length > 0 ? calls : null;
    if (r.peek() === "]") r.pos++;
    r.skipSpace();
    if (!r.atEnd()) return null;
  } catch {
    return null;
  }
  return calls.length > 0 ? calls : null;
}

/** Pythonic calls as raw calls; positional arguments take the declared parameters in order. */
export function pythonicCalls(body: string, tools: ToolSet): RegionParse | null {
  const calls = parsePythonicCalls(body);
  if (!calls) return null;
  return {
    calls: calls.map((c): RawCall => {
      const problems = c.truncated ? [problem("truncated", "the output stopped inside this call (max_tokens?)")] : [];
      const entries: JsonEntry[] = [];
      const positional = c.args.filter((a) => a.key === null);
      if (positional.length > 0) {
        const tool = tools.resolve(c.name, true)?.tool;
        const props = tool && typeof tool.schema.properties === "object" && tool.schema.properties !== null
          ? Object.keys(tool.schema.properties)
          : [];
        const named = new Set(c.args.map((a) => a.key));
        const free = props.filter((p) => !named.has(p));
        positional.forEach((a, i) => {
          const key = free[i] ?? `arg${i}`;
          a.key = key;
          problems.push(problem("positional_argument", `a positional argument was taken as "${key}"`, `/${key}`));
        });
      }
      for (const a of c.args) setEntry(entries, a.key!, a.value);
      return { name: c.name, arguments: { kind: "node", node: jsonObject(entries) }, problems };
    }),
  };
}

const pythonicRegion: RegionParser = (body, _closed, _spec, tools) => pythonicCalls(body, tools);

const IDENT = /[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)*/y;

/** A dotted identifier at `i`; `complete` is false when the text ends inside it. */
export function identifier(buf: string, i: number): { name: string; end: number; complete: boolean } | null {
  IDENT.lastIndex = i;
  const m = IDENT.exec(buf);
  if (!m) return null;
  let end = i + m[0].length;
  // A trailing "." may still grow into a dotted name.
  const complete = end < buf.length && !(buf[end] === "." && end + 1 === buf.length);
  return { name: m[0], end, complete };
}

export const pythonicDialect: Dialect = {
  name: "Pythonic (bare)",
  // Last: every other opener at these characters is asked first.
  openers: [{ chars: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_", where: "lineStart", order: 70, read: (buf, j, ctx) => pythonic(buf, j, j, ctx) }],
};

/**
 * `name(` at the start of the output (any name) or of a line (a declared name only); `k` is where
 * the name starts (after a `[` at `j`).
 */
export function pythonic(buf: string, j: number, k: number, ctx: ScanContext): Candidate {
  const id = identifier(buf, k);
  if (!id) return NO;
  const strict = !ctx.atBoundary;
  // Only a word that may still become a declared name is held back, so an answer's first word
  // flows at once. The test depends on the word alone, never on what follows it, so the answer
  // is the same however the text is split.
  if (id.name.length > 128 || !ctx.tools.mayBecomeToolName(id.name)) return NO;
  if (!id.complete) return ctx.eof ? NO : MAYBE;
  const next = buf[id.end];
  if (next === "(") {
    const declared = ctx.tools.isToolName(id.name) || (id.name.endsWith(".call") && ctx.tools.isToolName(id.name.slice(0, -5)));
    if (strict && !declared) return NO;
    return {
      kind: "region",
      length: 0,
      spec: { parse: pythonicRegion, close: [], reopen: [], valueStart: () => 0, strict, lineEnd: strict },
    };
  }
  // Functionary v3.2 may omit the first `>>>`: NAME\n{…} as the whole output.
  if (!strict && k === j && (next === "\n" || next === "\r")) return functionaryFirstLine(buf, j, id, ctx);
  return NO;
}
