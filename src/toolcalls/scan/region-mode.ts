// Region mode: a candidate region is held from its marker until it is complete (region-end.ts
// decides where it ends), then read once by its dialect's parser (parse-region.ts) and scored; calls
// are emitted, or the region turns out not to be a call and is read again as text from its second
// character (once, and not for large regions, so nested brackets cannot make the work quadratic).

import { isSpecialToken } from "../dialects/marker-table.ts";
import { problem } from "../scoring/problems.ts";
import type { RegionSpec } from "../dialects/candidate.ts";
import type { RegionParse } from "../scoring/raw-call.ts";
import { finalizeCall } from "../scoring/score-call.ts";
import { parseRegion } from "./parse-region.ts";
import { endAtOnce, RegionTracker, type RegionEnd } from "./region-end.ts";
import type { KnownRegion, Verdict } from "./region-verdict.ts";
import type { ScanState } from "./scan-state.ts";

/** Largest rejected region that is read again from its second character. */
const RESCAN_LIMIT = 4096;
/**
 * How many rejected regions, each inside the last one's text, are read again: deeper, a rejected
 * region is text as it is. Without it `{"name":` nested 400 deep was parsed at every depth; with
 * it no character is read again more than RESCAN_DEPTH + 1 times.
 */
const RESCAN_DEPTH = 4;

/**
 * A region whose end is already in the text (all of a one-shot text, or a stream's region once
 * complete) is read and judged before it is held: "drop" (rejected, and its marker is a special
 * token: skipped), "text" (rejected: its first character is text and the rest is read on, as
 * reject() does), or what to hold it with. Holding a region that is then rejected costs a rope,
 * its tracker and a rescan of a copy; a marker repeated back to back (`<tools><tools>…`) opens one
 * such region per repeat, and holding each one was most of what the flood cost.
 */
export function decideAtOnce(
  s: ScanState,
  spec: RegionSpec,
  at: number,
  header: number,
  eof: boolean,
): { kind: "drop" } | { kind: "text" } | { kind: "accept"; end: RegionEnd; verdict: Verdict } | { kind: "hold"; known: KnownRegion | null } {
  const buf = s.buf;
  const end = endAtOnce(spec, buf, at + header) ?? new RegionTracker(spec).advance(buf, at + header, eof);
  if (!end) return { kind: "hold", known: null };
  const consumed = header + end.consumed;
  let active = 0;
  for (const e of s.rescans) if (e > at) active++;
  // Passed through whole by reject() (large, or nested too deep): left to it.
  if (consumed > RESCAN_LIMIT || active >= RESCAN_DEPTH) return { kind: "hold", known: { end } };
  let rejected = end.rejected;
  let read: KnownRegion["read"];
  // An empty region rejected once is rejected every time: the same parser reads the same nothing
  // against the same tools (keyed by a shared spec, or by the marker's text where the marker is
  // all its spec says: `<function=NAME>`). A marker repeated back to back asks once per repeat.
  const key = end.bodyEnd !== 0 ? null : Object.isFrozen(spec) ? spec : header > 0 && spec.name !== undefined ? buf.slice(at, at + header) : null;
  const shift = end.closed ? 2 : 0;
  if (key !== null) {
    const known = s.emptyRegions.get(key) ?? 0;
    // No call at all; or calls judged away, which past the call cap would be dropped instead.
    if ((known & (EMPTY_NO_CALL << shift)) !== 0 || ((known & (EMPTY_REJECTED << shift)) !== 0 && (!s.calls.full || spec.strict === true))) rejected = true;
  }
  if (!rejected) {
    const parsed = parseRegion(spec, buf.slice(at + header, at + header + end.bodyEnd), end.closed, s.tools);
    // A call the cut-off output stopped inside is passed through by stepRegion.
    if (eof && s.cutOff && parsed?.calls.some((c) => c.problems.some((p) => p.code === "truncated"))) return { kind: "hold", known: { end } };
    const echo = s.afterCall && header === 0 && s.calls.lastBlock !== null;
    const verdict = judge(s, parsed, spec.strict === true, echo);
    rejected = verdict.kind === "reject";
    read = { parsed, verdict };
    if (rejected && key !== null && !echo && (s.emptyRegions.size < MAX_EMPTY_REGIONS || s.emptyRegions.has(key))) {
      s.emptyRegions.set(key, (s.emptyRegions.get(key) ?? 0) | ((parsed === null ? EMPTY_NO_CALL : EMPTY_REJECTED) << shift));
    }
  }
  if (!rejected) {
    // Calls, or a verdict to apply (a call past the cap): applied where it stands, unless the
    // parser gave some of the body back to be read as text (held, as usual).
    if (read && read.parsed?.rest === undefined) return { kind: "accept", end, verdict: read.verdict };
    return { kind: "hold", known: { end, read } };
  }
  if (isSpecialToken(buf.slice(at, at + header))) return DROP;
  // What reject() leaves: the rejected regions being read again, this one's end included.
  const rescans: number[] = [];
  for (const e of s.rescans) if (e > at) rescans.push(e);
  rescans.push(at + consumed);
  s.rescans = rescans;
  return TEXT;
}

/**
 * Applies decideAtOnce's "accept" to the region at `at` (`header` its marker's length), the text
 * before it already sent, as stepRegion would once holding it: its calls emitted, and the text
 * read on after it.
 */
export function acceptAtOnce(s: ScanState, at: number, header: number, end: RegionEnd, verdict: Verdict): void {
  const consumed = header + end.consumed;
  const before = s.calls.count;
  accept(s, verdict);
  accepted(s, before, header, end, s.buf.charAt(at + consumed - 1));
  s.pos = at + consumed;
  if (s.rescans.length > 0) s.rescans = s.rescans.filter((e) => e > s.pos);
}

/**
 * After a region's calls were accepted (`before`: the call count before them; `last`: the region's
 * last character): the block an echo is compared with, when it had a marker and its closing one.
 */
function accepted(s: ScanState, before: number, header: number, end: RegionEnd, last: string): void {
  s.calls.lastBlock = header > 0 && end.closed ? s.calls.list.slice(before).map((c) => c.call) : null;
  s.prev = last || s.prev;
}

/** Waits for the held region's end, then reads it: calls emitted, or the region read again as text. */
export function stepRegion(s: ScanState, eof: boolean): boolean {
  const region = s.region!;
  const { spec } = region;
  const held = s.held;
  const header = s.heldHeader;
  const known = "known" in region ? region.known : null;
  const end = "known" in region ? region.known.end : region.tracker.advance(held, header, eof);
  if (!end) return false;
  s.region = null;
  const consumed = header + end.consumed;
  if (end.rejected) return reject(s, consumed);
  const body = held.slice(header, header + end.bodyEnd);
  const parsed = known?.read ? known.read.parsed : parseRegion(spec, body, end.closed, s.tools);
  if (eof && s.cutOff && parsed?.calls.some((c) => c.problems.some((p) => p.code === "truncated"))) {
    return passThrough(s, consumed);
  }
  // Bare calls right after a closed block may be the model echoing it (LFM2 writes the list
  // again after `<|tool_call_end|>`): the same calls again are dropped, not made twice. Repeats
  // inside one list (`f(x); f(x)`) are the model asking twice, and stay.
  const echo = s.afterCall && header === 0 && s.calls.lastBlock !== null;
  const before = s.calls.count;
  const verdict = known?.read ? known.read.verdict : judge(s, parsed, spec.strict === true, echo);
  if (!accept(s, verdict)) return reject(s, consumed);
  accepted(s, before, header, end, held.charAt(consumed - 1));
  const after = held.rest(consumed);
  if (parsed!.rest !== undefined) s.resumeHeld(body.slice(parsed!.rest) + after.text.slice(after.pos), 0, header + parsed!.rest);
  else s.resumeHeld(after.text, after.pos, consumed);
  return true;
}

/**
 * ScanState.emptyRegions' bits, for an empty body left open (shifted by 2: closed): its parser
 * found no call; its calls were judged away (to undeclared tools).
 */
const EMPTY_NO_CALL = 1;
const EMPTY_REJECTED = 2;
/** Most markers whose empty regions are remembered per answer. */
const MAX_EMPTY_REGIONS = 256;

const REJECT: Verdict = { kind: "reject" };
const ECHO: Verdict = { kind: "echo" };
const DROP = { kind: "drop" } as const;
const TEXT = { kind: "text" } as const;

/** Judges a parsed region without changing anything (rejectedAtOnce asks before holding it). */
function judge(s: ScanState, parsed: RegionParse | null, strict: boolean, echo: boolean): Verdict {
  if (!parsed) return REJECT;
  // Past the cap a region its marker calls a call region is dropped without scoring; one found
  // in prose (strict) still has to prove it is a call, so it is scored, then dropped.
  if (s.calls.full && !strict && parsed.calls.length > 0 && parsed.content === undefined) {
    return { kind: "overCap", count: parsed.calls.length };
  }
  const finalized = parsed.calls.map((c) => finalizeCall(c, s.tools));
  const resolved = finalized.filter((f) => f !== null);
  if (strict && (resolved.length < parsed.calls.length || !resolved.every((f) => f.fits))) return REJECT;
  const calls = resolved.map((f) => f.call);
  if (echo && parsed.content === undefined && s.calls.repeatsLastBlock(calls)) return ECHO;
  if (resolved.length === 0 && parsed.content === undefined) return REJECT;
  return { kind: "emit", content: parsed.content, calls, unknown: parsed.calls.length - resolved.length };
}

/** Emits what a judged region holds; false when it holds no call after all. */
function accept(s: ScanState, verdict: Verdict): boolean {
  switch (verdict.kind) {
    case "reject":
      return false;
    case "overCap":
      s.calls.dropOverCap(verdict.count);
      s.afterCalls();
      return true;
    case "echo":
      s.calls.noteEcho();
      s.afterCalls();
      return true;
    case "emit": {
      const { content, calls, unknown } = verdict;
      if (content !== undefined) {
        s.emitText(content);
        s.trackAll(content);
      }
      if (unknown > 0 && calls[0]) {
        calls[0].problems.push(problem("unknown_tool_dropped", `${unknown} call(s) to undeclared tools next to this one were dropped`));
      }
      for (const call of calls) s.calls.emit(call);
      if (calls.length > 0) s.afterCalls();
      return true;
    }
  }
}

/**
 * The held region is not a call: its first character is text, and the rest is read again,
 * since a call may start inside it. A large region is passed through whole instead, so nested
 * brackets cannot make the work quadratic.
 */
function reject(s: ScanState, consumed: number): boolean {
  const held = s.held;
  const marker = held.slice(0, s.heldHeader);
  if (isSpecialToken(marker)) {
    // A special token that announces calls (`[TOOL_CALLS]`, `<|tool_call_start|>`) is never
    // meant for the reader: followed by something that is not a call, it is dropped, and what
    // follows is read as text.
    const after = held.rest(marker.length);
    s.resumeHeld(after.text, after.pos, marker.length);
    return true;
  }
  if (consumed > RESCAN_LIMIT || s.heldRescans.length >= RESCAN_DEPTH) return passThrough(s, consumed);
  const first = held.charAt(0);
  s.track(first);
  s.prev = first;
  s.emitText(first);
  const after = held.rest(1);
  s.resumeHeld(after.text, after.pos, 1, consumed);
  return true;
}

/** The held region's first `consumed` characters are text, as they are. */
function passThrough(s: ScanState, consumed: number): true {
  const held = s.held;
  const text = held.slice(0, consumed);
  s.trackAll(text);
  s.emitText(text);
  const after = held.rest(consumed);
  s.resumeHeld(after.text, after.pos, consumed);
  return true;
}
