// What a dialect declares (its literal markers and what each opens) and the builders its file uses
// to say so. A family's file exports one Dialect; registry.ts lists them, and the scanner's tables
// (marker-table.ts) and the tokens a raw completion must keep (output-markers.ts) come from there.

import { skipSpace, type Candidate, type RegionParser, type RegionSpec, type ScanContext } from "./candidate.ts";
import { namedJsonCall } from "../parse/decode-json-calls.ts";
import type { RawCall, RegionParse } from "../scoring/raw-call.ts";

/** What a literal marker opens, built each time the marker is found (`open` is the marker). */
export type Build = (open: string) => Candidate;

/** A literal marker and what it opens. */
export type Marker = [string, Build];

/** How a code fence opening at `from` is read (scan/classify-at.ts), for a fence an opener at `j` leads to. */
export type FenceAt = (buf: string, j: number, from: number, ctx: ScanContext) => Candidate;

/**
 * Where an opener is asked, besides at its first characters: anywhere; at the boundary (the start
 * of the output); at the start of a line (or the boundary); there or after whitespace; there, or in
 * the middle of a line when the next character after whitespace is `{` ("maybe" while the text
 * ends before it).
 */
export type OpenerWhere = "anywhere" | "boundary" | "lineStart" | "lineStartOrAfterSpace" | "lineStartOrObjectNext";

/**
 * An opening that carries a value (a name, a header) or has no marker at all, read by a function of
 * its dialect's file rather than by the literal tables. At a character scan/classify-at.ts asks the
 * literal tables and the openers starting there in the order of their numbers (the first answer
 * other than "no" wins): the reasoning markers at 0, stray closing markers at 10, literal call
 * markers at 30; the answer for a ``` fence is fixed, and after a character that starts a literal
 * marker or a fence (`<`, `[`, `]`, `` ` ``) nothing else is asked.
 */
export interface Opener {
  /** The characters it may start at; null: every character but those of the literal markers and fences. */
  chars: string | null;
  where: OpenerWhere;
  order: number;
  /** Asked when the request declares no tools too (it may find framing or reasoning, not only calls). */
  withoutTools?: boolean;
  /** What opens at `j` (`fence` reads a code fence the opener leads to). */
  read?: (buf: string, j: number, ctx: ScanContext, fence: FenceAt) => Candidate;
  /**
   * An explicit call marker (a tag that names its tool), read without the rest of the context: also
   * asked inside reasoning, where an explicit call ends the block (scan/classify-at.ts,
   * explicitCallAt). Stands for `read` when that is not given.
   */
  call?: (buf: string, j: number, eof: boolean) => Candidate;
}

export interface Dialect {
  /** The models that write it, as the registry lists them. */
  name: string;
  /**
   * Literal markers that open a call region (special tokens and tags). Each region ends at its
   * closing marker or where its own opening marker comes again (a block of calls is never opened
   * twice in a row: the same opener repeated is read one region at a time, not each one to the end
   * of the text). Where one marker is a prefix of another, the longer one wins.
   */
  calls?: readonly Marker[];
  /**
   * Literal markers around the calls: reasoning blocks, the closing marker of a block the template
   * opened, and framing with no content of its own (turn ends, answer wrappers), which is dropped.
   */
  blocks?: readonly Marker[];
  /**
   * Special tokens inside the dialect's regions or headers (separators, channel names): read by its
   * parser, never by the tables, and listed so that a raw completion writes them as text.
   */
  innerTokens?: readonly string[];
  /** Openings that carry a value or have no marker (see Opener), asked by scan/classify-at.ts. */
  openers?: readonly Opener[];
}

/** Where a JSON body starts after optional whitespace; -2 for a body that is not JSON. */
export const jsonStart = (body: string): number => {
  const i = skipSpace(body, 0);
  if (i === body.length) return -1;
  return body[i] === "{" || body[i] === "[" ? i : -2;
};

/** Like jsonStart, after an optional `prefix` the dialect writes before the value. */
export const afterPrefix = (prefix: string) => (body: string): number => {
  const i = skipSpace(body, 0);
  if (body.length - i < prefix.length && prefix.startsWith(body.slice(i))) return -1;
  const j = body.startsWith(prefix, i) ? skipSpace(body, i + prefix.length) : i;
  if (j === body.length) return -1;
  return body[j] === "{" || body[j] === "[" ? j : -2;
};

/**
 * A marker that opens a call region read by `parse`, ended by one of `close`; by default a JSON
 * value ends it too when the closing marker is missing, and several values may follow each other
 * when there is a closing marker to wait for.
 */
export const region = (parse: RegionParser, close: string[], extra: Partial<RegionSpec> = {}): Build =>
  (open: string): Candidate => ({
    kind: "region",
    length: open.length,
    spec: { parse, close, reopen: [open], valueStart: jsonStart, multi: close.length > 0, ...extra },
  });

/** A marker that opens a reasoning block, closed by `close` (consumed) or ended by one of `ends` (read next). */
export const reasoning = (close: string, ends?: readonly string[]): Build => (open) => ({ kind: "reasoning", length: open.length, close: [close], ends });

/** A marker with no content of its own. */
export const drop: Build = (open) => ({ kind: "drop", length: open.length });

/** The closing marker of a reasoning block with no opening one: the template opened the block. */
export const strayClose: Build = (open) => ({ kind: "drop", length: open.length, strayClose: true });

/** A parser's calls as a region's answer (null: the region holds no call). */
export const callsOf = (calls: RawCall[] | RawCall | null): RegionParse | null =>
  calls === null ? null : { calls: Array.isArray(calls) ? calls : [calls] };

/** A region whose opening carried the tool's name (`spec.name`): its body is the JSON arguments. */
export const namedJsonRegion: RegionParser = (body, _closed, spec) => callsOf(namedJsonCall(spec.name ?? "", body));
