// Functionary v3.2: `>>>NAME\n{…}` per call, `>>>all\n` before plain text. The first `>>>` may be
// left out (NAME\n{…} as the whole output) or written by the prompt (the output starts with the
// name: scan/classify-at.ts asks with the `>>>` put back). No literal markers: read here alone.

import { MAYBE, NO, skipSpace, type Candidate, type ScanContext } from "./candidate.ts";
import { jsonStart, namedJsonRegion } from "./dialect.ts";

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
