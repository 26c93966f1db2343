// Calls without a marker: a JSON object or array, a pythonic call, a Functionary v3.2 name line.
// At the start of the output they are read leniently; after prose only when they fit (strict).

import { MAYBE, NO, skipSpace, type Candidate, type ScanContext } from "./candidate.ts";
import { CALL_KEYS } from "./decode-json-calls.ts";
import { jsonStart } from "./marker-table.ts";

const IDENT = /[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z_][A-Za-z0-9_\-]*)*/y;

/** A dotted identifier at `i`; `complete` is false when the text ends inside it. */
function identifier(buf: string, i: number): { name: string; end: number; complete: boolean } | null {
  IDENT.lastIndex = i;
  const m = IDENT.exec(buf);
  if (!m) return null;
  let end = i + m[0].length;
  // A trailing "." may still grow into a dotted name.
  const complete = end < buf.length && !(buf[end] === "." && end + 1 === buf.length);
  return { name: m[0], end, complete };
}

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

export function jsonObject(buf: string, j: number, ctx: ScanContext): Candidate {
  const fits = firstKeyFits(buf, j, ctx);
  if (fits !== true) return fits;
  return {
    kind: "region",
    length: 0,
    spec: { dialect: "json", close: [], reopen: [], valueStart: () => 0, strict: !ctx.atBoundary, allowResponse: ctx.atBoundary },
  };
}

/** `[{…}, …]` or `[f(a=1), …]` at the start of the output or of a line. */
export function bracket(buf: string, j: number, ctx: ScanContext): Candidate {
  const k = skipSpace(buf, j + 1);
  if (k >= buf.length) return ctx.eof ? NO : MAYBE;
  if (buf[k] === "{") {
    const fits = firstKeyFits(buf, k, ctx);
    if (fits !== true) return fits;
    return {
      kind: "region",
      length: 0,
      spec: { dialect: "json", close: [], reopen: [], valueStart: () => 0, strict: !ctx.atBoundary },
    };
  }
  return pythonic(buf, j, k, ctx);
}

/** `name(` at the start of the output (any name) or of a line (a declared name only). */
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
      spec: { dialect: "pythonic", close: [], reopen: [], valueStart: () => 0, strict, lineEnd: strict },
    };
  }
  // Functionary v3.2 may omit the first `>>>`: NAME\n{…} as the whole output.
  if (!strict && k === j && (next === "\n" || next === "\r")) {
    const b = skipSpace(buf, id.end);
    if (b >= buf.length) return ctx.eof ? NO : MAYBE;
    if (buf[b] === "{" && ctx.tools.isToolName(id.name)) {
      return {
        kind: "region",
        length: id.end - j,
        spec: { dialect: "named-json", close: [], reopen: [], valueStart: jsonStart, name: id.name },
      };
    }
  }
  return NO;
}

/** Functionary v3.2: `>>>NAME\n{…}`; `>>>all\n` introduces plain text. */
export function functionary(buf: string, j: number, ctx: ScanContext): Candidate {
  const head = buf.slice(j, j + 140);
  if (head.length < 3) return !ctx.eof && ">>>".startsWith(head) ? MAYBE : NO;
  if (!head.startsWith(">>>")) return NO;
  const nl = head.indexOf("\n");
  if (nl < 0) return !ctx.eof && head.length < 140 && /^>>>[\w.\-]*$/.test(head) ? MAYBE : NO;
  const name = head.slice(3, nl).trim();
  if (!/^[\w.\-]+$/.test(name)) return NO;
  if (name === "all") return { kind: "drop", length: nl + 1 };
  // v3.2 writes `>>>` wherever a message part starts; in the middle of prose the name must be declared.
  if (!(ctx.atBoundary || ctx.atLineStart) && !ctx.tools.isToolName(name)) return NO;
  return {
    kind: "region",
    length: nl + 1,
    spec: { dialect: "named-json", close: [], reopen: [">>>"], valueStart: jsonStart, name },
  };
}
