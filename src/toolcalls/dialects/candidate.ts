// The answer to "what starts here?" at one position of a model's output, what the question needs
// to know about the text before that position, and the call region a marker opens: what every
// dialect's reader returns and the scanner acts on.

import type { RegionParse } from "../scoring/raw-call.ts";
import type { ToolSet } from "../scoring/tool-set.ts";

export type Candidate =
  | { kind: "no" }
  | { kind: "maybe" }
  | { kind: "region"; length: number; spec: RegionSpec }
  /** A reasoning block: `close` markers end it and are consumed, `ends` end it and are read next. */
  | { kind: "reasoning"; length: number; close: readonly string[]; ends?: readonly string[] }
  /**
   * A message whose text is read as it is until one of `close` (consumed) or `ends` (read next):
   * into the content (harmony's `to=user`), or nowhere (a message to a tool Switchyard does not serve).
   */
  | { kind: "block"; length: number; into: "content" | "none"; close: readonly string[]; ends: readonly string[] }
  /**
   * A marker with no content of its own: `<|END_RESPONSE|>`, `>>>all\n`, or (`strayClose`) the closing
   * marker of a reasoning block the template opened, which `reasoningFormat: "none"` keeps as text.
   */
  | { kind: "drop"; length: number; strayClose?: boolean }
  /** A code fence that holds no call: passed through as it is, closing fence included. */
  | { kind: "verbatim"; length: number; close: string }
  /** A code fence that may hold calls: read as a whole once closed. */
  | { kind: "fence"; length: number; close: string };

export interface ScanContext {
  tools: ToolSet;
  /** Only whitespace since the output started, a reasoning block ended, or a call ended. */
  atBoundary: boolean;
  /** Only spaces since the last newline. */
  atLineStart: boolean;
  /** The character before the position looked at ("" at the start of the output). */
  prev: string;
  eof: boolean;
  /** A call header the prompt opened and the output continues (`>>>`: the output starts with the name). */
  header?: string | null;
}

/**
 * Reads a finished region's body (its text between the opening marker and where it ended): the
 * calls it holds, or null when it holds none. `closed`: its closing marker was seen.
 */
export type RegionParser = (body: string, closed: boolean, spec: RegionSpec, tools: ToolSet) => RegionParse | null;

/** A call region: how it ends (scan/region-end.ts reads these fields) and which parser reads it. */
export interface RegionSpec {
  /** The dialect's parser for the region's body. */
  parse: RegionParser;
  /** Closing markers; consumed with the region. */
  close: readonly string[];
  /** Markers that start the next call; they end this region without being consumed. */
  reopen: readonly string[];
  /**
   * Where the region's bracketed value starts (-1: not known yet; -2: the body is not bracketed,
   * so only markers end it). Absent: same as -2.
   */
  valueStart?: (body: string, eof: boolean) => number;
  /** Several values may follow each other before the closing marker. */
  multi?: boolean;
  /** Found in prose: every call must name a declared tool exactly and fit its schema. */
  strict?: boolean;
  /** Strict pythonic: nothing but spaces may follow the call on its line. */
  lineEnd?: boolean;
  /** The tool name when the opening marker carries it (`<function=NAME>`, `>>>NAME`). */
  name?: string;
  /** `{"response": "…"}` means content here (the whole output is JSON). */
  allowResponse?: boolean;
  /** The closing marker is often left out (end-of-turn tokens); its absence is no problem. */
  optionalClose?: boolean;
  /** The closing marker also closes the body's own element (`</invoke>`), so the parser needs it. */
  closeInBody?: boolean;
}

export const NO: Candidate = { kind: "no" };
export const MAYBE: Candidate = { kind: "maybe" };

/** The first index from `i` that is not whitespace (JavaScript's `\s`), ASCII read without a regex. */
export const skipSpace = (t: string, i: number): number => {
  for (; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 32 || (c >= 9 && c <= 13)) continue;
    if (c < 128 || !/\s/.test(t[i]!)) break;
  }
  return i;
};
