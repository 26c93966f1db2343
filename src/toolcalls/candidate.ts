// The answer to "what starts here?" at one position of a model's output, and what the question
// needs to know about the text before that position.

import type { RegionSpec } from "./region-end.ts";
import type { ToolSet } from "./tool-set.ts";

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
