// Text mode, where the rewriter mostly is: plain text flows as it arrives, and at each position
// where something may start (scan/classify-at.ts) the candidate is classified and entered (a
// block, a region or fence to hold, a token to drop); "maybe" holds the rest until more text comes.

import type { Candidate } from "../dialects/candidate.ts";
import { CALL_TRIE, REASONING_TRIE, STRAY_TOKEN_TRIE, secondChars, type MarkerTrie } from "../dialects/marker-table.ts";
import { classifyAt, mayStartCandidate } from "./classify-at.ts";
import { enterReasoning } from "./reasoning-mode.ts";
import { RegionTracker } from "./region-end.ts";
import { acceptAtOnce, decideAtOnce } from "./region-mode.ts";
import type { KnownRegion } from "./region-verdict.ts";
import type { ScanState } from "./scan-state.ts";
import { isSpace } from "./text-scan.ts";

/**
 * In the middle of a line, with no call just ended, only these characters can change anything:
 * where mayStartCandidate answers true there, and the newline that starts a line.
 */
const MID_LINE_STOPS = new Uint8Array(128);
for (const c of "<[]`{fA>\n") MID_LINE_STOPS[c.charCodeAt(0)] = 1;

/** A table of the ASCII characters in `chars`, and of the second characters of `first`'s markers in `tries`. */
function followTable(chars: string, first?: string, tries: readonly MarkerTrie[] = []): Uint8Array {
  const table = new Uint8Array(128);
  for (const c of chars) table[c.charCodeAt(0)] = 1;
  for (const trie of tries) {
    const second = secondChars(trie, first!.charCodeAt(0));
    if (second === null) table.fill(1);
    else for (const code of second) if (code < 128) table[code] = 1;
  }
  return table;
}

const SPACE = " \t\n\r\v\f";
const QUOTES = "\u0022\u0027";
const BACKQUOTE = "\u0060";

/**
 * For each character that stops plain prose in the middle of a line, the characters after it
 * that may make it something (what classify-at.ts asks there): after any other one it is text,
 * known without asking. A flood of `[`, `{` or `<` asked classifyAt per character.
 *   `[`  whitespace or `{` (a JSON array of calls), or a marker's second character
 *   `{`  what starts a call's first key (dialects/json.ts): whitespace, a quote, a name
 *   `<`  a marker's second character, harmony's `<|`, `<function`, `<invoke`
 *   `]`  a marker's second character (MiniMax-M3's `]<]minimax[>[`)
 *   `>`  Functionary's `>>>`; a backquote, a fence's three; `f` `functools[`; `A` Command-R's `Action:`
 */
const FOLLOWS: Record<string, Uint8Array> = {
  "[": followTable(SPACE + "{", "[", [REASONING_TRIE, CALL_TRIE]),
  "{": followTable(SPACE + QUOTES + "_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
  "<": followTable("|fi", "<", [REASONING_TRIE, STRAY_TOKEN_TRIE, CALL_TRIE]),
  "]": followTable("", "]", [CALL_TRIE]),
  ">": followTable(">"),
  [BACKQUOTE]: followTable(BACKQUOTE),
  f: followTable("u"),
  A: followTable("c"),
};
const FOLLOW_BY_CODE: Array<Uint8Array | undefined> = [];
for (const [c, table] of Object.entries(FOLLOWS)) FOLLOW_BY_CODE[c.charCodeAt(0)] = table;

/**
 * Whether the stop character `code` at `i` (mid-line) is text whatever comes later, seen from the
 * character after it; false when the text ends at it, or when classifyAt must be asked.
 */
function plainStop(buf: string, i: number, code: number): boolean {
  const table = FOLLOW_BY_CODE[code];
  if (table === undefined) return false;
  const next = buf.charCodeAt(i + 1);
  return next < 128 && table[next] === 0;
}

/** Reads text from `pos` on; true when the mode changed and the machine should go on. */
export function stepText(s: ScanState, eof: boolean): boolean {
  const buf = s.buf;
  let i = s.pos;
  while (i < buf.length) {
    if (!s.atLineStart && !s.atBoundary && !s.afterCall) {
      // Plain prose: nothing to track and nothing to classify until the next stop.
      let code = buf.charCodeAt(i);
      for (;;) {
        while (code >= 128 || MID_LINE_STOPS[code] === 0) {
          if (++i === buf.length) return emitPlain(s, i);
          code = buf.charCodeAt(i);
        }
        if (!plainStop(buf, i, code)) break;
        if (++i === buf.length) return emitPlain(s, i);
        code = buf.charCodeAt(i);
      }
    }
    const c = buf[i]!;
    if (s.afterCall && (c === "," || c === ";")) {
      // A separator between two calls (`f(a=1), g(b=2)`, `{…}; {…}`) disappears with them.
      let k = i + 1;
      while (isSpace(buf[k])) k++;
      if (k >= buf.length && !eof) return emitPlain(s, i);
      if (k < buf.length) {
        const next = classifyAt(buf, k, { ...s.context(k, eof), atBoundary: true });
        if (next.kind === "maybe") return emitPlain(s, i);
        if (next.kind === "region" || next.kind === "fence") {
          emitPlain(s, i);
          s.pos = k;
          s.out.content.dropPending();
          return enter(s, next);
        }
      }
    } else if (s.afterCall && c === "]" && !opensCandidate(s, buf, i, eof)) {
      // The closing bracket of a call list whose opening one was missing.
      emitPlain(s, i);
      s.pos = i + 1;
      s.prev = "]";
      return true;
    } else if (mayStartCandidate(c, s.atBoundary || s.atLineStart)) {
      const candidate = classifyAt(buf, i, s.context(i, eof));
      if (candidate.kind === "maybe") return emitPlain(s, i);
      if (candidate.kind === "region") {
        const decided = decideAtOnce(s, candidate.spec, i, candidate.length, eof);
        if (decided.kind === "drop") {
          emitPlain(s, i);
          s.header = null;
          s.pos = i + candidate.length;
          return true;
        }
        if (decided.kind === "accept") {
          emitPlain(s, i);
          s.header = null;
          acceptAtOnce(s, i, candidate.length, decided.end, decided.verdict);
          return true;
        }
        if (decided.kind === "hold") {
          emitPlain(s, i);
          return enter(s, candidate, decided.known);
        }
        // "text": the marker's first character is text, and what follows it is read on.
        s.header = null;
      } else if (candidate.kind !== "no") {
        emitPlain(s, i);
        return enter(s, candidate);
      }
    }
    s.track(c);
    i++;
  }
  return emitPlain(s, i);
}

/** Whether a candidate (a marker such as `]<]minimax[>[<tool_call>`) opens at `i`. */
function opensCandidate(s: ScanState, buf: string, i: number, eof: boolean): boolean {
  return classifyAt(buf, i, s.context(i, eof)).kind !== "no";
}

/** Emits buf[pos, i) as content (the cursor flags already describe it) and waits for more. */
function emitPlain(s: ScanState, i: number): false {
  if (i > s.pos) {
    const text = s.buf.slice(s.pos, i);
    s.pos = i;
    s.prev = text[text.length - 1]!;
    s.emitText(text);
  }
  return false;
}

/**
 * Enters what `candidate` opens at `pos` (its marker not yet consumed); false for "no" and "maybe".
 * `known`: what decideAtOnce learned of a region (null: its end is not in the text yet).
 */
export function enter(s: ScanState, candidate: Candidate, known: KnownRegion | null = null): boolean {
  s.header = null;
  switch (candidate.kind) {
    case "drop":
      if (candidate.strayClose && s.out.inlineReasoning) {
        s.emitText(s.buf.slice(s.pos, s.pos + candidate.length));
      }
      s.prev = s.buf[s.pos + candidate.length - 1] ?? s.prev;
      s.pos += candidate.length;
      s.atNewBoundary();
      return true;
    case "reasoning":
      if (s.out.inlineReasoning) s.emitText(s.buf.slice(s.pos, s.pos + candidate.length));
      else s.out.content.dropPending();
      s.pos += candidate.length;
      enterReasoning(s, candidate.close, candidate.ends);
      return true;
    case "block":
      s.pos += candidate.length;
      s.block = candidate;
      s.mode = "block";
      s.searchFrom = s.pos;
      return true;
    case "region": {
      const spec = candidate.spec;
      s.hold(candidate.length);
      s.mode = "region";
      s.region = known ? { spec, known } : { spec, tracker: new RegionTracker(spec) };
      return true;
    }
    case "fence":
      s.hold(candidate.length);
      s.mode = "fence";
      s.searchFrom = candidate.length;
      return true;
    case "verbatim": {
      const header = s.buf.slice(s.pos, s.pos + candidate.length);
      s.pos += candidate.length;
      s.trackAll(header);
      // A JSON answer fenced as the whole reply: the fence is the model's habit, not the answer.
      s.unfencing = s.jsonResponse && !s.out.content.started && /^```[ \t]*(?:json)?[ \t]*\r?\n$/i.test(header);
      if (!s.unfencing) s.emitText(header);
      s.mode = "verbatim";
      return true;
    }
    default:
      return false;
  }
}
