// Reasoning mode: the block streams as reasoning events as it comes (only a possible closing marker
// is held), until a marker closes it (consumed) or ends it (read next). A call marker inside the
// block holds everything from there: if the block closes after all it was reasoning (models draft
// calls while thinking); if the output ends first, the reasoning ended at the marker.

import { explicitCallAt } from "./classify-at.ts";
import type { ScanState } from "./scan-state.ts";
import { firstMarker, heldSuffix } from "./text-scan.ts";

/** Enters a reasoning block at `pos`, ended by one of `close` (consumed) or `ends` (read next). */
export function enterReasoning(s: ScanState, close: readonly string[], ends: readonly string[] = []): void {
  s.mode = "reasoning";
  s.reasoningCloses = close;
  s.reasoningEnds = ends;
  s.out.reasoning.newPart();
  s.searchFrom = s.pos;
  s.callSearchFrom = s.pos;
  s.callHeld = false;
}

/** Reads the block from `pos` on; true when it ended and the machine should go on. */
export function stepReasoning(s: ScanState, eof: boolean): boolean {
  const longest = Math.max(0, ...s.reasoningCloses.map((m) => m.length), ...s.reasoningEnds.map((m) => m.length));
  const end = firstMarker(s.buf, Math.max(s.pos, s.searchFrom - longest + 1), s.reasoningCloses, s.reasoningEnds);
  // Everything from `pos` on is held while a call marker opened inside the block: if the block
  // closes after all, it was all reasoning (models draft calls while thinking); if the output
  // ends first, the reasoning ended at the marker and the call is read.
  if (s.callHeld) {
    if (end) return closeReasoning(s, end.at, end.length);
    if (!eof) {
      s.searchFrom = s.buf.length;
      s.heldTail = s.buf.slice(Math.max(s.pos, s.buf.length - longest + 1));
      return false;
    }
    s.out.reasoning.dropPending();
    s.out.inlineOpener = "";
    s.callHeld = false;
    s.mode = "text";
    s.atNewBoundary();
    return true;
  }
  const limit = end ? end.at : s.buf.length;
  const call = s.tools.enabled ? callMarkerIn(s, Math.max(s.pos, s.callSearchFrom), limit, eof) : null;
  if (call && !call.maybe) {
    s.emitReasoning(s.buf.slice(s.pos, call.at));
    s.pos = call.at;
    s.callHeld = true;
    s.searchFrom = call.at;
    return true;
  }
  if (end) return closeReasoning(s, end.at, end.length);
  let keep = 0;
  if (!eof) {
    for (const m of [...s.reasoningCloses, ...s.reasoningEnds]) keep = Math.max(keep, heldSuffix(s.buf, s.pos, m));
    if (call) keep = Math.max(keep, s.buf.length - call.at);
  }
  s.emitReasoning(s.buf.slice(s.pos, s.buf.length - keep));
  s.pos = s.buf.length - keep;
  s.searchFrom = s.buf.length;
  s.callSearchFrom = s.pos;
  if (eof) s.out.reasoning.dropPending();
  return false;
}

function closeReasoning(s: ScanState, at: number, length: number): true {
  s.emitReasoning(s.buf.slice(s.pos, at));
  if (s.out.inlineReasoning && length > 0) {
    s.emitText(s.out.inlineOpener);
    s.out.inlineOpener = "";
    s.emitText(s.buf.slice(at, at + length));
  }
  s.out.inlineOpener = "";
  s.pos = at + length;
  s.out.reasoning.dropPending();
  s.callHeld = false;
  s.mode = "text";
  s.prev = length > 0 ? s.buf[at + length - 1]! : s.prev;
  s.atNewBoundary();
  return true;
}

/** Whether a marker that ends the reasoning block may be in `delta` (or begin before it). */
export function mayEndReasoning(s: ScanState, delta: string): boolean {
  const window = s.heldTail + delta;
  const markers = [...s.reasoningCloses, ...s.reasoningEnds];
  if (markers.some((m) => window.includes(m))) return true;
  s.heldDeltas.push(delta);
  const longest = Math.max(0, ...markers.map((m) => m.length));
  s.heldTail = window.slice(Math.max(0, window.length - longest + 1));
  return false;
}

/**
 * The first explicit call marker (a special token or tag, never bare JSON) in buf[from, to):
 * its index, or the index of a suffix that may still become one ("maybe"), or -1.
 */
function callMarkerIn(s: ScanState, from: number, to: number, eof: boolean): { at: number; maybe: boolean } | null {
  const buf = s.buf;
  for (let i = from; i < to; i++) {
    const c = buf.charCodeAt(i);
    if (c !== 60 /* < */ && c !== 91 /* [ */) continue;
    const found = explicitCallAt(buf, i, eof);
    if (found === "maybe") return { at: i, maybe: true };
    if (found === "yes") return { at: i, maybe: false };
  }
  return null;
}
