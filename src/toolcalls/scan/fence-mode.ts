// Code fences: one that may hold calls (fence mode) is held until it closes and its inside is
// rewritten as a complete output of its own; one that cannot (verbatim mode) streams through as
// text, or, for a JSON answer fenced whole (`jsonResponse`), without its fence.

import type { FinishReason, UpstreamEvent } from "../../events/events.ts";
import { problem, scoreOf } from "../scoring/problems.ts";
import type { ToolSet } from "../scoring/tool-set.ts";
import type { ScoredToolCall } from "../scoring/types.ts";
import type { ScanState } from "./scan-state.ts";
import { findFenceClose, heldSuffix } from "./text-scan.ts";

/** Rewrites a fence's inside as a whole output (stream-rewriter.ts: a rewriter of its own). */
export type ReadInside = (tools: ToolSet, body: string, finish: FinishReason) => { events: UpstreamEvent[]; calls: ScoredToolCall[] };

/** Waits for the held fence's closing ```, then reads its inside as an output of its own. */
export function stepFence(s: ScanState, eof: boolean, readInside: ReadInside): boolean {
  const held = s.held;
  const header = s.heldHeader;
  const found = findFenceClose(held, Math.max(header, s.searchFrom), eof);
  if (found === "wait" || (found === null && !eof)) {
    s.searchFrom = Math.max(header, held.length - 3);
    return false;
  }
  const closeAt = found ?? -1;
  const bodyEnd = closeAt < 0 ? held.length : closeAt;
  const consumed = closeAt < 0 ? held.length : closeAt + 3;
  const body = held.slice(header, bodyEnd);
  const text = held.slice(0, consumed);
  const after = held.rest(consumed);
  s.resumeHeld(after.text, after.pos, consumed);

  // The inside of the fence is a complete output of its own.
  const inner = readInside(s.tools, body, closeAt < 0 && s.cutOff ? "length" : "stop");
  if (inner.calls.length === 0) {
    s.trackAll(text);
    s.emitText(text);
    return true;
  }
  for (const e of inner.events) {
    if (e.type === "text") {
      s.emitText(e.delta);
      s.trackAll(e.delta);
    } else if (e.type === "reasoning") s.out.event(e);
  }
  for (const call of inner.calls) {
    if (closeAt < 0 && !call.problems.some((p) => p.code === "truncated")) {
      call.problems.push(problem("missing_closing_tag", "the closing ``` of the code fence is missing"));
      call.score = scoreOf(call.problems);
    }
    s.calls.emit(call);
  }
  s.prev = text[text.length - 1]!;
  s.afterCalls();
  return true;
}

/** A fence that holds no call, passed through as it comes up to its closing ``` (included). */
export function stepVerbatim(s: ScanState, eof: boolean): boolean {
  const found = findFenceClose(s.buf, s.pos, eof);
  if (typeof found === "number") {
    const text = s.buf.slice(s.pos, s.unfencing ? found : found + 3);
    s.pos = found + 3;
    s.unfencing = false;
    s.trackAll(text);
    s.emitText(text);
    s.mode = "text";
    return true;
  }
  const keep = found === "wait" ? s.buf.length - s.buf.lastIndexOf("```") : eof ? 0 : heldSuffix(s.buf, s.pos, "```");
  const text = s.buf.slice(s.pos, s.buf.length - keep);
  s.pos += text.length;
  s.trackAll(text);
  s.emitText(text);
  return false;
}
