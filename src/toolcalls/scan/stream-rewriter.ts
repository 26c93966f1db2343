// The incremental rewriter: text deltas in, UpstreamEvents out. Plain text leaves at once; only a
// suffix that may still become a marker or a call is held back, and a candidate region is held
// until it is complete, then parsed once. A cursor moves forward through the text; nothing before
// it is looked at again (a rejected candidate is re-read from its second character, once). This
// file feeds the text and runs the modes (text-mode.ts and its siblings) over their shared state.

import type { FinishReason, UpstreamEvent } from "../../events/events.ts";
import { ALL_REASONING_CLOSES, openerOf, promptState } from "../prompt/prompt-state.ts";
import { ToolSet } from "../scoring/tool-set.ts";
import type { ScoredToolCall, ToolCallReport, ToolDefinition } from "../scoring/types.ts";
import { stepBlock } from "./block-mode.ts";
import { stepFence, stepVerbatim, type ReadInside } from "./fence-mode.ts";
import { enterReasoning, mayEndReasoning, stepReasoning } from "./reasoning-mode.ts";
import { stepRegion } from "./region-mode.ts";
import type { RewriteOptions } from "./rewrite-options.ts";
import { ScanState } from "./scan-state.ts";
import { stepText } from "./text-mode.ts";

export { MAX_CALLS_PER_ANSWER } from "./call-list.ts";

/**
 * While the text waits on a "maybe" (a `{` followed by a flood of whitespace, a fence's first
 * line), the question is asked again on every delta only while the held text is this short;
 * beyond it, only once the held text has doubled. Every answer depends only on the text up to
 * where it looks, so asking later never changes it; asking each time would re-read the whole
 * held text per delta (quadratic in a whitespace flood), asking at doubling lengths re-reads it
 * at most twice in all.
 */
export const MAYBE_RECHECK_SPAN = 64;

/** The inside of a fence is a complete output of its own, read by a rewriter of its own. */
const readFenceInside: ReadInside = (tools, body, finish) => {
  const inner = new ToolCallStreamRewriter(tools);
  const events = [...inner.push(body), ...inner.flush(finish)];
  return { events, calls: inner.toolCalls };
};

export class ToolCallStreamRewriter {
  private readonly s: ScanState;
  private finished = false;
  /** Held text (text mode, from `pos` on) when a "maybe" was last looked at; 0 when not waiting. */
  private waitSpan = 0;

  constructor(tools: readonly ToolDefinition[] | ToolSet, options: RewriteOptions = {}) {
    const s = (this.s = new ScanState(tools instanceof ToolSet ? tools : new ToolSet(tools, options.tool_choice), options));
    // Where the output starts: inside a reasoning block or a call header the prompt left open.
    const prompt = options.generationPrompt === undefined ? null : promptState(options.generationPrompt);
    const opened = options.startInReasoning ?? prompt?.reasoning ?? false;
    if (opened) {
      const opener = typeof opened === "string" ? openerOf(opened) : null;
      // Not knowing which marker opened the block, any closing marker closes it.
      enterReasoning(s, opener ? [opener.close] : ALL_REASONING_CLOSES, opener?.ends);
      // With reasoning kept inline, the prompt's opening marker is part of the message llama.cpp
      // returns; an opener that is prose (Apriel) is part of the reasoning when the prompt wrote it.
      if (typeof opened === "string" && opener?.keep && options.startInReasoning === undefined) s.emitReasoning(opened);
      else if (typeof opened === "string" && s.out.inlineReasoning) s.out.inlineOpener = opened;
    } else if (prompt?.header) {
      s.header = prompt.header;
    }
    if (options.continuation) {
      // A prefilled message goes on: whitespace at the start of the output belongs to it.
      if (s.mode === "reasoning") s.out.reasoning.continuePart();
      else s.out.content.continuePart();
    }
  }

  /** The request's tools, prepared. */
  get tools(): ToolSet {
    return this.s.tools;
  }

  /** Index of this rewriter's first call; raised when the upstream also sends native calls. */
  get indexOffset(): number {
    return this.s.calls.indexOffset;
  }

  set indexOffset(index: number) {
    this.s.calls.indexOffset = index;
  }

  /** Feeds a text delta; returns the events it makes ready. */
  push(delta: string): UpstreamEvent[] {
    if (this.finished) throw new Error("ToolCallStreamRewriter: push() after flush()");
    const s = this.s;
    if (s.callHeld && s.mode === "reasoning" && !mayEndReasoning(s, delta)) return [];
    if (s.mode === "region" || s.mode === "fence") s.held.append(delta);
    else s.rebase(s.takeHeldDeltas(), delta);
    // Waiting on a "maybe": not asked again until the held text has doubled (see MAYBE_RECHECK_SPAN).
    // The held text is not read either, so its string is not flattened per delta.
    if (this.waitSpan > MAYBE_RECHECK_SPAN && s.mode === "text" && s.buf.length - s.pos < 2 * this.waitSpan) return [];
    this.run(false);
    this.waitSpan = s.mode === "text" ? s.buf.length - s.pos : 0;
    return s.out.drain();
  }

  /**
   * The text is complete: decides everything still held back. `finish` is why it ended: after
   * `length` (max_tokens, or a stream cut off) a call the output stopped inside is not a call —
   * its arguments are not all there — and its text stays content; after `stop` the model ended
   * it itself, and what is open is closed (`truncated`).
   */
  flush(finish: FinishReason = "stop"): UpstreamEvent[] {
    if (this.finished) return [];
    const s = this.s;
    s.cutOff = finish === "length";
    s.rebase(s.takeHeldDeltas(), "");
    this.run(true);
    s.out.content.dropPending();
    this.finished = true;
    s.calls.finish();
    return s.out.drain();
  }

  /** The calls emitted so far, scored. */
  get toolCalls(): ScoredToolCall[] {
    return this.s.calls.toolCalls;
  }

  /** What the encoder puts in `x_switchyard.tool_calls`. */
  get reports(): ToolCallReport[] {
    return this.s.calls.reports;
  }

  /** The finish reason to report: `tool_calls` once a call was emitted and the model stopped. */
  finishReason(upstream: FinishReason): FinishReason {
    return this.s.calls.finishReason(upstream);
  }

  /** Runs the current mode, and the next, until one needs more text. */
  private run(eof: boolean): void {
    const s = this.s;
    for (;;) {
      let moved: boolean;
      switch (s.mode) {
        case "text":
          moved = stepText(s, eof);
          break;
        case "reasoning":
          moved = stepReasoning(s, eof);
          break;
        case "block":
          moved = stepBlock(s, eof);
          break;
        case "region":
          moved = stepRegion(s, eof);
          break;
        case "fence":
          moved = stepFence(s, eof, readFenceInside);
          break;
        case "verbatim":
          moved = stepVerbatim(s, eof);
          break;
      }
      if (!moved) return;
    }
  }
}
