// Region mode: a candidate region is held from its marker until it is complete (region-end.ts
// decides where it ends), then read once by its dialect's parser (parse-region.ts) and scored; calls
// are emitted, or the region turns out not to be a call and is read again as text from its second
// character (once, and not for large regions, so nested brackets cannot make the work quadratic).

import { isSpecialToken } from "../dialects/marker-table.ts";
import { problem } from "../scoring/problems.ts";
import type { RegionParse } from "../scoring/raw-call.ts";
import { finalizeCall } from "../scoring/score-call.ts";
import { parseRegion } from "./parse-region.ts";
import type { ScanState } from "./scan-state.ts";

/** Largest rejected region that is read again from its second character. */
const RESCAN_LIMIT = 4096;
/**
 * How many rejected regions, each inside the last one's text, are read again: deeper, a rejected
 * region is text as it is. Without it `{"name":` nested 400 deep was parsed at every depth; with
 * it no character is read again more than RESCAN_DEPTH + 1 times.
 */
const RESCAN_DEPTH = 4;

/** Waits for the held region's end, then reads it: calls emitted, or the region read again as text. */
export function stepRegion(s: ScanState, eof: boolean): boolean {
  const { spec, tracker } = s.region!;
  const held = s.held;
  const header = s.heldHeader;
  const end = tracker.advance(held, header, eof);
  if (!end) return false;
  s.region = null;
  const consumed = header + end.consumed;
  if (end.rejected) return reject(s, consumed);
  const body = held.slice(header, header + end.bodyEnd);
  const parsed = parseRegion(spec, body, end.closed, s.tools);
  if (eof && s.cutOff && parsed?.calls.some((c) => c.problems.some((p) => p.code === "truncated"))) {
    return passThrough(s, consumed);
  }
  // Bare calls right after a closed block may be the model echoing it (LFM2 writes the list
  // again after `<|tool_call_end|>`): the same calls again are dropped, not made twice. Repeats
  // inside one list (`f(x); f(x)`) are the model asking twice, and stay.
  const echo = s.afterCall && header === 0 && s.calls.lastBlock !== null;
  const before = s.calls.count;
  if (!accept(s, parsed, spec.strict === true, echo)) return reject(s, consumed);
  s.calls.lastBlock = header > 0 && end.closed ? s.calls.list.slice(before).map((c) => c.call) : null;
  s.prev = held.charAt(consumed - 1) || s.prev;
  const after = held.rest(consumed);
  if (parsed!.rest !== undefined) s.resumeHeld(body.slice(parsed!.rest) + after.text.slice(after.pos), 0, header + parsed!.rest);
  else s.resumeHeld(after.text, after.pos, consumed);
  return true;
}

/** Emits what a parsed region holds; false when it holds no call after all. */
function accept(s: ScanState, parsed: RegionParse | null, strict: boolean, echo = false): boolean {
  if (!parsed) return false;
  // Past the cap a region its marker calls a call region is dropped without scoring; one found
  // in prose (strict) still has to prove it is a call, so it is scored, then dropped.
  if (s.calls.full && !strict && parsed.calls.length > 0 && parsed.content === undefined) {
    s.calls.dropOverCap(parsed.calls.length);
    s.afterCalls();
    return true;
  }
  const finalized = parsed.calls.map((c) => finalizeCall(c, s.tools));
  const resolved = finalized.filter((f) => f !== null);
  if (strict && (resolved.length < parsed.calls.length || !resolved.every((f) => f.fits))) return false;
  if (echo && parsed.content === undefined && s.calls.repeatsLastBlock(resolved.map((f) => f.call))) {
    s.calls.noteEcho();
    s.afterCalls();
    return true;
  }
  if (resolved.length === 0 && parsed.content === undefined) return false;
  if (parsed.content !== undefined) {
    s.emitText(parsed.content);
    s.trackAll(parsed.content);
  }
  const unknown = parsed.calls.length - resolved.length;
  if (unknown > 0 && resolved[0]) {
    const first = resolved[0].call;
    first.problems.push(problem("unknown_tool_dropped", `${unknown} call(s) to undeclared tools next to this one were dropped`));
  }
  for (const f of resolved) s.calls.emit(f.call);
  if (resolved.length > 0) s.afterCalls();
  return true;
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
