// Functionary v3.2: `>>>NAME\n{…}` per call, `>>>all\n` before plain text. The first `>>>` may be
// left out (NAME\n{…} as the whole output) or written by the prompt (the output starts with the
// name: read here with the `>>>` put back). No literal markers: read here alone.

import { MAYBE, NO, skipSpace, type Candidate, type ScanContext } from "./candidate.ts";
import { jsonStart, namedJsonRegion, type Dialect } from "./dialect.ts";

export const functionaryDialect: Dialect = {
  name: "Functionary v3.2",
  openers: [
    // The prompt ended with `>>>`: asked at whatever the output starts with (a `>` is read below).
    { chars: null, where: "anywhere", order: 50, withoutTools: true, read: (buf, j, ctx) => afterPrompt(buf, j, ctx) },
    { chars: ">", where: "anywhere", order: 60, read: (buf, j, ctx) => functionary(buf, j, ctx) },
  ],
};

/** The output after a prompt that ended with Functionary's `>>>`: it starts with the recipient line. */
function afterPrompt(buf: string, j: number, ctx: ScanContext): Candidate {
  if (ctx.header !== ">>>" || buf[j] === ">") return NO;
  const v = functionary(">>>" + buf.slice(j, j + 137), 0, { ...ctx, atBoundary: true });
  if (v.kind === "maybe") return v;
  if (v.kind === "drop" || (ctx.tools.enabled && v.kind === "region")) return { ...v, length: v.length - 3 };
  return NO;
}

/** `>>>NAME\n{…}`; `>>>all\n` introduces plain text. */
export function functionary(buf: string, j: number, ctx: ScanContext): Candidate {
  // Asked at every `>` of the output: nothing is copied unless `>>>` is there.
  if (buf.length - j < 3) return !ctx.eof && ">>>".startsWith(buf.slice(j)) ? MAYBE : NO;
  if (!buf.startsWith(">>>", j)) return NO;
  const head = buf.slice(j, j + 140);
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
    spec: { parse: namedJsonRegion, close: [], reopen: [">>>"], valueStart: jsonStart, name },
  };
}

/**
 * The output's first line is a declared tool's name and a JSON object follows (the first `>>>` left
 * out); `id` is the name pythonic.ts read at `j`, ended by a newline.
 */
export function functionaryFirstLine(buf: string, j: number, id: { name: string; end: number }, ctx: ScanContext): Candidate {
  const b = skipSpace(buf, id.end);
  if (b >= buf.length) return ctx.eof ? NO : MAYBE;
  if (buf[b] === "{" && ctx.tools.isToolName(id.name)) {
    return {
      kind: "region",
      length: id.end - j,
      spec: { parse: namedJsonRegion, close: [], reopen: [], valueStart: jsonStart, name: id.name },
    };
  }
  return NO;
}
