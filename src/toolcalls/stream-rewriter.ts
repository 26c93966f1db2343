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
import { TextRope } from "./text-rope.ts";
import { ToolSet } from "./tool-set.ts";
import type { RewriteOptions, ScoredToolCall, ToolCallReport, ToolDefinition } from "./types.ts";

type Mode = "text" | "reasoning" | "region" | "fence" | "verbatim";

/** Largest rejected region that is read again from its second character. */
const RESCAN_LIMIT = 4096;

const isSpace = (c: string | undefined): boolean => c === " " || c === "\n" || c === "\t" || c === "\r";

/**
 * In the middle of a line, with no call just ended, only these characters can change anything:
 * where mayStartCandidate answers true there, and the newline that starts a line.
 */
const MID_LINE_STOPS = new Uint8Array(128);
for (const c of "<[`{fA>\n") MID_LINE_STOPS[c.charCodeAt(0)] = 1;

/** Longest suffix of `text` (from `from` on) that is a proper prefix of `marker`. */
function heldSuffix(text: string, from: number, marker: string): number {
  const first = marker.charCodeAt(0);
  for (let n = Math.min(marker.length - 1, text.length - from); n > 0; n--) {
    // Only a suffix that starts with the marker's first character can be its prefix (no slice otherwise).
    if (text.charCodeAt(text.length - n) === first && marker.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}

/**
 * The closing ``` of a code fence: three backticks not followed by a word character (that would
 * open a fence with a language). "wait" when the text ends right after them.
 */
function findFenceClose(text: { indexOf(s: string, from: number): number; charAt(i: number): string; length: number }, from: number, eof: boolean): number | "wait" | null {
  for (let i = text.indexOf("```", from); i >= 0; i = text.indexOf("```", i + 3)) {
    if (i + 3 >= text.length) return eof ? i : "wait";
    if (!/\w/.test(text.charAt(i + 3))) return i;
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
  /** Text not decided yet is `buf` from `pos` on (text, reasoning and verbatim modes). */
  private buf = "";
  private pos = 0;
  /** A held region or fence, its opening marker included (region and fence modes). */
  private held = new TextRope();
  private heldHeader = 0;
  private region: { spec: RegionSpec; tracker: RegionTracker } | null = null;
  private searchFrom = 0;
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

  constructor(tools: readonly ToolDefinition[] | ToolSet, options: RewriteOptions = {}) {
    this.tools = tools instanceof ToolSet ? tools : new ToolSet(tools, options.tool_choice);
    this.parallel = options.parallel_tool_calls !== false;
    if (options.startInReasoning) this.enterReasoning("</think>");
  }

  /** Feeds a text delta; returns the events it makes ready. */
  push(delta: string): UpstreamEvent[] {
    if (this.finished) throw new Error("ToolCallStreamRewriter: push() after flush()");
    if (this.mode === "region" || this.mode === "fence") this.held.append(delta);
    else {
      this.buf = this.pos === 0 ? this.buf + delta : this.buf.slice(this.pos) + delta;
      this.searchFrom = Math.max(0, this.searchFrom - this.pos);
      this.pos = 0;
    }
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
      prev: i > this.pos ? this.buf[i - 1]! : this.prev,
      eof,
    };
  }

  private stepText(eof: boolean): boolean {
    const buf = this.buf;
    let i = this.pos;
    while (i < buf.length) {
      if (!this.atLineStart && !this.atBoundary && !this.afterCall) {
        // Plain prose: nothing to track and nothing to classify until the next stop.
        let code = buf.charCodeAt(i);
        while (code >= 128 || MID_LINE_STOPS[code] === 0) {
          if (++i === buf.length) return this.emitPlain(i);
          code = buf.charCodeAt(i);
        }
      }
      const c = buf[i]!;
      if (this.afterCall && (c === "," || c === ";")) {
        // A separator between two calls (`f(a=1), g(b=2)`, `{…}; {…}`) disappears with them.
        let k = i + 1;
        while (isSpace(buf[k])) k++;
        if (k >= buf.length && !eof) return this.emitPlain(i);
        if (k < buf.length) {
          const next = classifyAt(buf, k, { ...this.context(k, eof), atBoundary: true });
          if (next.kind === "maybe") return this.emitPlain(i);
          if (next.kind === "region" || next.kind === "fence") {
            this.emitPlain(i);
            this.pos = k;
            this.pendingSpace = "";
            return this.enter(next);
          }
        }
      } else if (this.afterCall && c === "]") {
        // The closing bracket of a call list whose opening one was missing.
        this.emitPlain(i);
        this.pos = i + 1;
        this.prev = "]";
        return true;
      } else if (mayStartCandidate(c, this.atBoundary || this.atLineStart)) {
        const candidate = classifyAt(buf, i, this.context(i, eof));
        if (candidate.kind === "maybe") return this.emitPlain(i);
        if (candidate.kind !== "no") {
          this.emitPlain(i);
          return this.enter(candidate);
        }
      }
      this.track(c);
      i++;
    }
    return this.emitPlain(i);
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
    for (let i = 0; i < text.length; i++) this.track(text[i]!);
    if (text.length > 0) this.prev = text[text.length - 1]!;
  }

  /** Emits buf[pos, i) as content (the cursor flags already describe it) and waits for more. */
  private emitPlain(i: number): false {
    if (i > this.pos) {
      const text = this.buf.slice(this.pos, i);
      this.pos = i;
      this.prev = text[text.length - 1]!;
      this.emitText(text);
    }
    return false;
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
    // Not `this.out[this.out.length - 1]` on an empty array: index -1 is a slow property lookup in V8.
    const last = this.out.length > 0 ? this.out[this.out.length - 1] : undefined;
    if (e.type === "text" && last?.type === "text") last.delta += e.delta;
    else if (e.type === "reasoning" && last?.type === "reasoning") last.delta += e.delta;
    else this.out.push(e);
  }

  private atNewBoundary(): void {
    this.atBoundary = true;
    this.atLineStart = true;
  }

  /** Continues in text mode with `text` from `pos` on. */
  private resume(text: string, pos: number): void {
    this.buf = text;
    this.pos = pos;
    this.mode = "text";
  }

  private hold(header: number): void {
    this.held = new TextRope(this.buf, this.pos);
    this.heldHeader = header;
    this.buf = "";
    this.pos = 0;
  }

  private enter(candidate: Candidate): boolean {
    switch (candidate.kind) {
      case "drop":
        this.prev = this.buf[this.pos + candidate.length - 1] ?? this.prev;
        this.pos += candidate.length;
        this.atNewBoundary();
        return true;
      case "reasoning":
        this.pos += candidate.length;
        this.pendingSpace = "";
        this.enterReasoning(candidate.close);
        return true;
      case "region":
        this.hold(candidate.length);
        this.mode = "region";
        this.region = { spec: candidate.spec, tracker: new RegionTracker(candidate.spec) };
        return true;
      case "fence":
        this.hold(candidate.length);
        this.mode = "fence";
        this.searchFrom = candidate.length;
        return true;
      case "verbatim": {
        const header = this.buf.slice(this.pos, this.pos + candidate.length);
        this.pos += candidate.length;
        this.trackAll(header);
        this.emitText(header);
        this.mode = "verbatim";
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
    this.searchFrom = this.pos;
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
    const k = this.buf.indexOf(close, Math.max(this.pos, this.searchFrom - close.length + 1));
    if (k >= 0) {
      this.emitReasoning(this.buf.slice(this.pos, k));
      this.pos = k + close.length;
      this.pendingReasoningSpace = "";
      this.mode = "text";
      this.prev = close[close.length - 1]!;
      this.atNewBoundary();
      return true;
    }
    const keep = eof ? 0 : heldSuffix(this.buf, this.pos, close);
    this.emitReasoning(this.buf.slice(this.pos, this.buf.length - keep));
    this.pos = this.buf.length - keep;
    this.searchFrom = this.buf.length;
    if (eof) this.pendingReasoningSpace = "";
    return false;
  }

  // ---- regions ------------------------------------------------------------------------------

  private stepRegion(eof: boolean): boolean {
    const { spec, tracker } = this.region!;
    const held = this.held;
    const header = this.heldHeader;
    const end = tracker.advance(held, header, eof);
    if (!end) return false;
    this.region = null;
    const consumed = header + end.consumed;
    if (end.rejected) return this.reject(consumed);
    const body = held.slice(header, header + end.bodyEnd);
    const parsed = parseRegion(spec, body, end.closed, this.tools);
    if (!this.accept(parsed, spec.strict === true)) return this.reject(consumed);
    this.prev = held.charAt(consumed - 1) || this.prev;
    const after = held.rest(consumed);
    if (parsed!.rest !== undefined) this.resume(body.slice(parsed!.rest) + after.text.slice(after.pos), 0);
    else this.resume(after.text, after.pos);
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

  /**
   * The held region is not a call: its first character is text, and the rest is read again,
   * since a call may start inside it. A large region is passed through whole instead, so nested
   * brackets cannot make the work quadratic.
   */
  private reject(consumed: number): boolean {
    const held = this.held;
    if (consumed > RESCAN_LIMIT) {
      const text = held.slice(0, consumed);
      this.trackAll(text);
      this.emitText(text);
      const after = held.rest(consumed);
      this.resume(after.text, after.pos);
      return true;
    }
    const first = held.charAt(0);
    this.track(first);
    this.prev = first;
    this.emitText(first);
    const after = held.rest(1);
    this.resume(after.text, after.pos);
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
    const held = this.held;
    const header = this.heldHeader;
    const found = findFenceClose(held, Math.max(header, this.searchFrom), eof);
    if (found === "wait" || (found === null && !eof)) {
      this.searchFrom = Math.max(header, held.length - 3);
      return false;
    }
    const closeAt = found ?? -1;
    const bodyEnd = closeAt < 0 ? held.length : closeAt;
    const consumed = closeAt < 0 ? held.length : closeAt + 3;
    const body = held.slice(header, bodyEnd);
    const text = held.slice(0, consumed);
    const after = held.rest(consumed);
    this.resume(after.text, after.pos);

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
      if (closeAt < 0 && !call.problems.some((p) => p.code === "truncated")) {
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
    const found = findFenceClose(this.buf, this.pos, eof);
    if (typeof found === "number") {
      const text = this.buf.slice(this.pos, found + 3);
      this.pos = found + 3;
      this.trackAll(text);
      this.emitText(text);
      this.mode = "text";
      return true;
    }
    const keep = found === "wait" ? this.buf.length - this.buf.lastIndexOf("```") : eof ? 0 : heldSuffix(this.buf, this.pos, "```");
    const text = this.buf.slice(this.pos, this.buf.length - keep);
    this.pos += text.length;
    this.trackAll(text);
    this.emitText(text);
    return false;
  }
}
