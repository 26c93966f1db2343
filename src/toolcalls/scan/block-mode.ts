// Block mode: a message read as it is until one of its closing markers (consumed) or ending markers
// (read next), into the content (harmony's `to=user`) or nowhere (a message to a tool Switchyard
// does not serve); no call is read inside it.

import type { ScanState } from "./scan-state.ts";
import { firstMarker, heldSuffix } from "./text-scan.ts";

/** Reads the block from `pos` on; true when it ended and the machine should go on. */
export function stepBlock(s: ScanState, eof: boolean): boolean {
  const { into, close, ends } = s.block!;
  const markers = [...close, ...ends];
  const longest = Math.max(...markers.map((m) => m.length));
  const hit = firstMarker(s.buf, Math.max(s.pos, s.searchFrom - longest + 1), close, ends);
  let keep = 0;
  if (!hit && !eof) for (const m of markers) keep = Math.max(keep, heldSuffix(s.buf, s.pos, m));
  const to = hit ? hit.at : s.buf.length - keep;
  const text = s.buf.slice(s.pos, to);
  if (into === "content") {
    s.trackAll(text);
    s.emitText(text);
  }
  s.pos = to;
  s.searchFrom = s.buf.length;
  if (!hit) return false;
  s.pos += hit.length;
  s.block = null;
  s.mode = "text";
  s.atNewBoundary();
  return true;
}
