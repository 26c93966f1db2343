// The incremental rewriter: text deltas in, UpstreamEvents out. Plain text leaves at once; only a
// suffix that may still become a marker or a call is held back, and a candidate region is held
// until it is complete, then parsed once. A cursor moves forward through the text; nothing before
// it is looked at again (a rejected candidate is re-read from its second character, once).

import type { FinishReason, UpstreamEvent } from "../stream/events.ts";
import { classifyAt, mayStartCandidate, type Candidate, type ScanContext } from "./detect-markers.ts";
import { problem, scoreOf } from "./problems.ts";
import type { RegionParse } from "./raw-call.ts";
import { RegionTracker, type RegionSpec } from "./region-end.ts";
import { parseRegion } from "./parse-region.ts";
import { finalizeCall } from "./score-call.ts";
import { ToolSet } from "./tool-set.ts";
import type { RewriteOptions, ScoredToolCall, ToolCallReport, ToolDefinition } from "./types.ts";

type Mode = "text" | "reasoning" | "region" | "fence" | "verbatim";

const isSpace = (c: string | undefined): boolean => c === " " || c === "\n" || c === "\t" || c === "\r";

/** Longest suffix of `text` that is a proper prefix of `marker`. */
function heldSuffix(text: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, text.length); n > 0; n--) {
    if (marker.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

/**
 * The closing ``` of a code fence: three backticks not followed by a word character (that would
 * open a fence with a language). "wait" when the text ends right after them.
 */
function findFenceClose(buf: string, from: number, eof: boolean): number | "wait" | null {
  for (let i = buf.indexOf("```", from); i >= 0; i = buf.indexOf("```", i + 3)) {
    const next = buf[i + 3];
    if (next === undefined) return eof ? i : "wait";
    if (!/\w/.test(next)) return i;
  }
  return null;
}

export class ToolCallStreamRewriter {
  readonly tools: ToolSet;
  /** Index of this rewriter's first call; raised when the upstream also sends native calls. */
  indexOffset = 0;
  private readonly parallel: boolean;
  private readonly calls: Array<{ index: number; call: ScoredToolCall }> = [];
  private dropped = 0;
  private finished = false;
  private out: UpstreamEvent[] = [];

  private mode: Mode = "text";
  /** Text not decided yet. In region and fence modes it starts with the candidate's marker. */
  private buf = "";
  // Where the text cursor stands, described by what came before it.
  private atBoundary = true;
  private atLineStart = true;
  private prev = "";
  private afterCall = false;
  // Whitespace is held back until something visible follows it, so no output ends with it.
  private pendingSpace = "";
  private textStarted = false;
  private pendingReasoningSpace = "";
  private reasoningStarted = false;
  private reasoningBlocks = 0;
  private reasoningClose = "";
  private searchFrom = 0;
  private region: { spec: RegionSpec; tracker: RegionTracker; header: number } | null = null;
  private fenceHeader = 0;
  private fenceClose = "```";

  constructor(tools: readonly ToolDefinition[] | ToolSet, options: RewriteOptions = {}) {
    this.tools = tools instanceof ToolSet ? tools : new ToolSet(tools, options.tool_choice);
    this.parallel = options.parallel_tool_calls !== false;
    if (options.startInReasoning) this.enterReasoning("</think>");
  }

  /** Feeds a text delta; returns the events it makes ready. */
  push(delta: string): UpstreamEvent[] {
    if (this.finished) throw new Error("ToolCallStreamRewriter: push() after flush()");
    this.buf += delta;
    this.run(false);
    return this.drain();
  }

  /** The text is complete: decides everything still held back. */
  flush(): UpstreamEvent[] {
    if (this.finished) return [];
    this.run(true);
    this.pendingSpace = "";
    this.finished = true;
    if (this.dropped > 0 && this.calls.length > 0) {
      const first = this.calls[0]!.call;
      first.problems.push(
        problem("extra_calls_dropped", `parallel_tool_calls is false: ${this.dropped} further call(s) were dropped`),
      );
      first.score = scoreOf(first.problems);
    }
    return this.drain();
  }

  /** The calls emitted so far, scored. */
  get toolCalls(): ScoredToolCall[] {
    return this.calls.map((c) => c.call);
  }

  /** What the encoder puts in `x_switchyard.tool_calls`. */
  get reports(): ToolCallReport[] {
    return this.calls.map(({ index, call }) => ({ index, id: call.id, score: call.score, problems: call.problems }));
  }

  /** The finish reason to report: `tool_calls` once a call was emitted and the model stopped. */
  finishReason(upstream: FinishReason): FinishReason {
    return upstream === "stop" && this.calls.length > 0 ? "tool_calls" : upstream;
  }

  private drain(): UpstreamEvent[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private run(eof: boolean): void {
    for (;;) {
      let moved: boolean;
      switch (this.mode) {
        case "text":
          moved = this.stepText(eof);
          break;
        case "reasoning":
          moved = this.stepReasoning(eof);
          break;
        case "region":
          moved = this.stepRegion(eof);
          break;
        case "fence":
          moved = this.stepFence(eof);
          break;
        case "verbatim":
          moved = this.stepVerbatim(eof);
          break;
      }
      if (!moved) return;
    }
  }

  // ---- text ---------------------------------------------------------------------------------

  private context(i: number, eof: boolean): ScanContext {
    return {
      tools: this.tools,
      atBoundary: this.atBoundary,
      atLineStart: this.atLineStart,
      prev: i > 0 ? this.buf[i - 1]! : this.prev,
      eof,
    };
  }

  private stepText(eof: boolean): boolean {
    const buf = this.buf;
    let i = 0;
    while (i < buf.length) {
      const c = buf[i]!;
      if (this.afterCall && (c === "," || c === ";")) {
        // A separator between two calls (`f(a=1), g(b=2)`, `{…}; {…}`) disappears with them.
        let k = i + 1;
        while (isSpace(buf[k])) k++;
        if (k >= buf.length && !eof) return this.hold(i);
        if (k < buf.length) {
          const next = classifyAt(buf, k, { ...this.context(k, eof), atBoundary: true });
          if (next.kind === "maybe") return this.hold(i);
          if (next.kind === "region" || next.kind === "fence") {
            this.emitPlain(i);
            this.buf = this.buf.slice(k - i);
            this.pendingSpace = "";
            return this.enter(next);
          }
        }
      } else if (this.afterCall && c === "]") {
        // The closing bracket of a call list whose opening one was missing.
        this.emitPlain(i);
        this.buf = this.buf.slice(1);
        this.prev = "]";
        return true;
      } else {
        const lineish = this.atBoundary || this.atLineStart;
        if (mayStartCandidate(c, lineish)) {
          const candidate = classifyAt(buf, i, this.context(i, eof));
          if (candidate.kind === "maybe") return this.hold(i);
          if (candidate.kind !== "no") {
            this.emitPlain(i);
            return this.enter(candidate);
          }
        }
      }
      this.track(c);
      i++;
    }
    this.emitPlain(i);
    return false;
  }

  /** Emits the text before `i` and waits for more. */
  private hold(i: number): boolean {
    this.emitPlain(i);
    return false;
  }

  private track(c: string): void {
    if (c === "\n") this.atLineStart = true;
    else if (!isSpace(c)) {
      this.atLineStart = false;
      this.atBoundary = false;
      this.afterCall = false;
    }
  }

  private trackAll(text: string): void {
    for (const c of text) this.track(c);
    if (text.length > 0) this.prev = text[text.length - 1]!;
  }

  /** Emits buf[0, i) as content; the cursor flags already describe it. */
  private emitPlain(i: number): void {
    if (i === 0) return;
    const text = this.buf.slice(0, i);
    this.buf = this.buf.slice(i);
    this.prev = text[text.length - 1]!;
    this.emitText(text);
  }

  private emitText(text: string): void {
    const s = this.pendingSpace + text;
    let end = s.length;
    while (end > 0 && isSpace(s[end - 1])) end--;
    if (end === 0) {
      this.pendingSpace = s;
      return;
    }
    let start = 0;
    if (!this.textStarted) while (start < end && isSpace(s[start])) start++;
    this.textStarted = true;
    this.pendingSpace = s.slice(end);
    this.event({ type: "text", delta: s.slice(start, end) });
  }

  private event(e: UpstreamEvent): void {
    const last = this.out[this.out.length - 1];
    if (e.type === "text" && last?.type === "text") last.delta += e.delta;
    else if (e.type === "reasoning" && last?.type === "reasoning") last.delta += e.delta;
    else this.out.push(e);
  }

  private atNewBoundary(): void {
    this.atBoundary = true;
    this.atLineStart = true;
  }

  private enter(candidate: Candidate): boolean {
    switch (candidate.kind) {
      case "drop":
        this.prev = this.buf[candidate.length - 1] ?? this.prev;
        this.buf = this.buf.slice(candidate.length);
        this.atNewBoundary();
        return true;
      case "reasoning":
        this.buf = this.buf.slice(candidate.length);
        this.pendingSpace = "";
        this.enterReasoning(candidate.close);
        return true;
      case "region":
        this.mode = "region";
        this.region = { spec: candidate.spec, tracker: new RegionTracker(candidate.spec), header: candidate.length };
        return true;
      case "fence":
        this.mode = "fence";
        this.fenceHeader = candidate.length;
        this.fenceClose = candidate.close;
        this.searchFrom = candidate.length;
        return true;
      case "verbatim": {
        const header = this.buf.slice(0, candidate.length);
        this.buf = this.buf.slice(candidate.length);
        this.trackAll(header);
        this.emitText(header);
        this.mode = "verbatim";
        this.fenceClose = candidate.close;
        return true;
      }
      default:
        return false;
    }
  }

  // ---- reasoning ----------------------------------------------------------------------------

  private enterReasoning(close: string): void {
    this.mode = "reasoning";
    this.reasoningClose = close;
    this.reasoningStarted = false;
    this.pendingReasoningSpace = "";
    this.searchFrom = 0;
  }

  private emitReasoning(text: string): void {
    const s = this.pendingReasoningSpace + text;
    let end = s.length;
    while (end > 0 && isSpace(s[end - 1])) end--;
    if (end === 0) {
      this.pendingReasoningSpace = this.reasoningStarted ? s : "";
      return;
    }
    let start = 0;
    let prefix = "";
    if (!this.reasoningStarted) {
      while (start < end && isSpace(s[start])) start++;
      if (this.reasoningBlocks > 0) prefix = "\n\n";
      this.reasoningBlocks++;
      this.reasoningStarted = true;
    }
    this.pendingReasoningSpace = s.slice(end);
    this.event({ type: "reasoning", delta: prefix + s.slice(start, end) });
  }

  private stepReasoning(eof: boolean): boolean {
    const close = this.reasoningClose;
    const k = this.buf.indexOf(close, Math.max(0, this.searchFrom - close.length + 1));
    if (k >= 0) {
      this.emitReasoning(this.buf.slice(0, k));
      this.buf = this.buf.slice(k + close.length);
      this.pendingReasoningSpace = "";
      this.mode = "text";
      this.prev = close[close.length - 1]!;
      this.atNewBoundary();
      return true;
    }
    const keep = eof ? 0 : heldSuffix(this.buf, close);
    this.emitReasoning(this.buf.slice(0, this.buf.length - keep));
    this.buf = this.buf.slice(this.buf.length - keep);
    this.searchFrom = this.buf.length;
    if (eof) this.pendingReasoningSpace = "";
    return false;
  }

  // ---- regions ------------------------------------------------------------------------------

  private stepRegion(eof: boolean): boolean {
    const region = this.region!;
    const end = region.tracker.advance(this.buf, region.header, eof);
    if (!end) return false;
    const body = this.buf.slice(region.header, region.header + end.bodyEnd);
    const text = this.buf.slice(0, region.header + end.consumed);
    this.buf = this.buf.slice(region.header + end.consumed);
    this.mode = "text";
    this.region = null;
    if (end.rejected) return this.reject(text);
    const parsed = parseRegion(region.spec, body, end.closed, this.tools);
    if (!this.accept(parsed, region.spec.strict === true)) return this.reject(text);
    this.prev = text[text.length - 1] ?? this.prev;
    if (parsed!.rest !== undefined) this.buf = body.slice(parsed!.rest) + this.buf;
    return true;
  }

  /** Emits what a parsed region holds; false when it holds no call after all. */
  private accept(parsed: RegionParse | null, strict: boolean): boolean {
    if (!parsed) return false;
    const finalized = parsed.calls.map((c) => finalizeCall(c, this.tools));
    const resolved = finalized.filter((f) => f !== null);
    if (strict && (resolved.length < parsed.calls.length || !resolved.every((f) => f.fits))) return false;
    if (resolved.length === 0 && parsed.content === undefined) return false;
    if (parsed.content !== undefined) {
      this.emitText(parsed.content);
      this.trackAll(parsed.content);
    }
    const unknown = parsed.calls.length - resolved.length;
    if (unknown > 0 && resolved[0]) {
      const first = resolved[0].call;
      first.problems.push(problem("unknown_tool_dropped", `${unknown} call(s) to undeclared tools next to this one were dropped`));
    }
    for (const f of resolved) this.emitCall(f.call);
    if (resolved.length > 0) {
      this.pendingSpace = "";
      this.atNewBoundary();
      this.afterCall = true;
    }
    return true;
  }

  /** Not a call: its first character is text, and the rest is read again. */
  private reject(text: string): boolean {
    const first = text[0]!;
    this.buf = text.slice(1) + this.buf;
    this.track(first);
    this.prev = first;
    this.emitText(first);
    return true;
  }

  private emitCall(call: ScoredToolCall): void {
    if (!this.parallel && this.calls.length > 0) {
      this.dropped++;
      return;
    }
    const index = this.indexOffset + this.calls.length;
    this.calls.push({ index, call });
    this.event({ type: "toolCall", index, id: call.id, name: call.function.name, argumentsDelta: "" });
    this.event({ type: "toolCall", index, argumentsDelta: call.function.arguments });
  }

  // ---- code fences --------------------------------------------------------------------------

  private stepFence(eof: boolean): boolean {
    const close = this.fenceClose;
    const found = findFenceClose(this.buf, Math.max(this.fenceHeader, this.searchFrom), eof);
    if (found === "wait" || (found === null && !eof)) {
      this.searchFrom = found === "wait" ? this.buf.lastIndexOf("```") : Math.max(this.fenceHeader, this.buf.length - 2);
      return false;
    }
    const k = found ?? -1;
    const bodyEnd = k < 0 ? this.buf.length : k;
    const consumed = k < 0 ? this.buf.length : k + close.length;
    const body = this.buf.slice(this.fenceHeader, bodyEnd);
    const text = this.buf.slice(0, consumed);
    this.buf = this.buf.slice(consumed);
    this.mode = "text";

    // The inside of the fence is a complete output of its own.
    const inner = new ToolCallStreamRewriter(this.tools);
    const events = [...inner.push(body), ...inner.flush()];
    if (inner.calls.length === 0) {
      this.trackAll(text);
      this.emitText(text);
      return true;
    }
    for (const e of events) {
      if (e.type === "text") {
        this.emitText(e.delta);
        this.trackAll(e.delta);
      } else if (e.type === "reasoning") this.event(e);
    }
    for (const { call } of inner.calls) {
      if (k < 0 && !call.problems.some((p) => p.code === "truncated")) {
        call.problems.push(problem("missing_closing_tag", "the closing ``` of the code fence is missing"));
        call.score = scoreOf(call.problems);
      }
      this.emitCall(call);
    }
    this.prev = text[text.length - 1]!;
    this.pendingSpace = "";
    this.atNewBoundary();
    this.afterCall = true;
    return true;
  }

  private stepVerbatim(eof: boolean): boolean {
    const close = this.fenceClose;
    const found = findFenceClose(this.buf, 0, eof);
    if (typeof found === "number") {
      const text = this.buf.slice(0, found + close.length);
      this.buf = this.buf.slice(found + close.length);
      this.trackAll(text);
      this.emitText(text);
      this.mode = "text";
      return true;
    }
    const keep = found === "wait" ? this.buf.length - this.buf.lastIndexOf("```") : eof ? 0 : heldSuffix(this.buf, close);
    const text = this.buf.slice(0, this.buf.length - keep);
    this.buf = this.buf.slice(text.length);
    this.trackAll(text);
    this.emitText(text);
    return false;
  }
}
