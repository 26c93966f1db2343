// The incremental rewriter: text deltas in, UpstreamEvents out. Plain text leaves at once; only a
// suffix that may still become a marker or a call is held back, and a candidate region is held
// until it is complete, then parsed once. A cursor moves forward through the text; nothing before
// it is looked at again (a rejected candidate is re-read from its second character, once).

import type { FinishReason, UpstreamEvent } from "../events/events.ts";
import { classifyAt, mayStartCandidate, type Candidate, type ScanContext } from "./detect-markers.ts";
import { problem, scoreOf } from "./problems.ts";
import type { RegionParse } from "./raw-call.ts";
import { RegionTracker, type RegionSpec } from "./region-end.ts";
import { parseRegion } from "./parse-region.ts";
import { finalizeCall } from "./score-call.ts";
import { ALL_REASONING_CLOSES, openerOf, promptState } from "./prompt-state.ts";
import { explicitCallAt } from "./detect-markers.ts";
import { isSpecialToken } from "./marker-table.ts";
import { sameJson } from "./same-json.ts";
import { findFenceClose, firstMarker, heldSuffix, isSpace } from "./text-scan.ts";
import { TextRope } from "./text-rope.ts";
import { TrimmedChannel } from "./trimmed-channel.ts";
import { ToolSet } from "./tool-set.ts";
import type { RewriteOptions, ScoredToolCall, ToolCallReport, ToolDefinition } from "./types.ts";

type Mode = "text" | "reasoning" | "block" | "region" | "fence" | "verbatim";

/** Largest rejected region that is read again from its second character. */
const RESCAN_LIMIT = 4096;
/**
 * How many rejected regions, each inside the last one's text, are read again: deeper, a rejected
 * region is text as it is. Without it `{"name":` nested 400 deep was parsed at every depth; with
 * it no character is read again more than RESCAN_DEPTH + 1 times.
 */
const RESCAN_DEPTH = 4;

/**
 * While the text waits on a "maybe" (a `{` followed by a flood of whitespace, a fence's first
 * line), the question is asked again on every delta only while the held text is this short;
 * beyond it, only once the held text has doubled. Every answer depends only on the text up to
 * where it looks, so asking later never changes it; asking each time would re-read the whole
 * held text per delta (quadratic in a whitespace flood), asking at doubling lengths re-reads it
 * at most twice in all.
 */
export const MAYBE_RECHECK_SPAN = 64;

/**
 * The most tool calls one answer makes. Agents run a handful of calls per turn (OpenAI's parallel
 * calls rarely pass a dozen); a model looping on a call header writes thousands, and each kept call
 * would be scored, validated and answered at several times its size. Past the cap, call markup is
 * read and dropped unscored, and the first call carries `extra_calls_dropped` with the count.
 */
export const MAX_CALLS_PER_ANSWER = 128;

/**
 * In the middle of a line, with no call just ended, only these characters can change anything:
 * where mayStartCandidate answers true there, and the newline that starts a line.
 */
const MID_LINE_STOPS = new Uint8Array(128);
for (const c of "<[]`{fA>\n") MID_LINE_STOPS[c.charCodeAt(0)] = 1;

export class ToolCallStreamRewriter {
  readonly tools: ToolSet;
  /** Index of this rewriter's first call; raised when the upstream also sends native calls. */
  indexOffset = 0;
  private readonly parallel: boolean;
  private readonly calls: Array<{ index: number; call: ScoredToolCall }> = [];
  private dropped = 0;
  private readonly scanContext: ScanContext;
  /** Calls past MAX_CALLS_PER_ANSWER, dropped unscored. */
  private overCap = 0;
  private finished = false;
  /** The output was cut off (`flush("length")`): a call it stopped inside is not delivered. */
  private cutOff = false;
  /** The calls of the last region, when it had a marker and its closing marker (an echo may follow). */
  private lastBlock: ScoredToolCall[] | null = null;
  private out: UpstreamEvent[] = [];

  private mode: Mode = "text";
  /** Text not decided yet is `buf` from `pos` on (text, reasoning and verbatim modes). */
  private buf = "";
  private pos = 0;
  /** A held region or fence, its opening marker included (region and fence modes). */
  private held = new TextRope();
  private heldHeader = 0;
  /** Text mode: where the rejected regions being read again end in `buf`, outermost first. */
  private rescans: number[] = [];
  /** Region and fence modes: the same, in `held` (those that go on past its start). */
  private heldRescans: number[] = [];
  private region: { spec: RegionSpec; tracker: RegionTracker } | null = null;
  private searchFrom = 0;
  // Where the text cursor stands, described by what came before it.
  private atBoundary = true;
  private atLineStart = true;
  private prev = "";
  private afterCall = false;
  /** Held text (text mode, from `pos` on) when a "maybe" was last looked at; 0 when not waiting. */
  private waitSpan = 0;
  // Whitespace is held back until something visible follows it, so no output ends with it.
  private readonly content = new TrimmedChannel("");
  private readonly reasoning = new TrimmedChannel("\n\n");
  /** Markers that close the reasoning block (consumed), and markers that end it (not consumed). */
  private reasoningCloses: readonly string[] = [];
  private reasoningEnds: readonly string[] = [];
  private callSearchFrom = 0;
  /** `buf` from `pos` on starts with a call marker found inside the reasoning block. */
  private callHeld = false;
  /**
   * While `callHeld`, deltas in which no marker ending the block can be, not yet added to `buf`
   * (adding each to the held string and searching it would copy the whole string per delta), and
   * the end of the text before them, where such a marker may have begun.
   */
  private heldDeltas: string[] = [];
  private heldTail = "";
  /** With reasoning inline, the prompt's opening marker, sent with the block's first text. */
  private inlineOpener = "";
  /** `jsonResponse`: the fence being read is the answer's own, and is not sent. */
  private readonly jsonResponse: boolean;
  private unfencing = false;
  /** The block being read (block mode). */
  private block: Extract<Candidate, { kind: "block" }> | null = null;
  /** A call header the prompt opened (`>>>`), until the output's first decision. */
  private header: string | null = null;
  /** `reasoningFormat: "none"`: reasoning is emitted as text, markers included. */
  private readonly inlineReasoning: boolean;

  constructor(tools: readonly ToolDefinition[] | ToolSet, options: RewriteOptions = {}) {
    this.tools = tools instanceof ToolSet ? tools : new ToolSet(tools, options.tool_choice);
    this.scanContext = { tools: this.tools, atBoundary: true, atLineStart: true, prev: "", eof: false, header: null };
    this.parallel = options.parallel_tool_calls !== false;
    this.inlineReasoning = options.reasoningFormat === "none";
    this.jsonResponse = options.jsonResponse === true;
    const prompt = options.generationPrompt === undefined ? null : promptState(options.generationPrompt);
    const opened = options.startInReasoning ?? prompt?.reasoning ?? false;
    if (opened) {
      const opener = typeof opened === "string" ? openerOf(opened) : null;
      // Not knowing which marker opened the block, any closing marker closes it.
      this.enterReasoning(opener ? [opener.close] : ALL_REASONING_CLOSES, opener?.ends);
      // With reasoning kept inline, the prompt's opening marker is part of the message llama.cpp
      // returns; an opener that is prose (Apriel) is part of the reasoning when the prompt wrote it.
      if (typeof opened === "string" && opener?.keep && options.startInReasoning === undefined) this.emitReasoning(opened);
      else if (typeof opened === "string" && this.inlineReasoning) this.inlineOpener = opened;
    } else if (prompt?.header) {
      this.header = prompt.header;
    }
    if (options.continuation) {
      // A prefilled message goes on: whitespace at the start of the output belongs to it.
      if (this.mode === "reasoning") this.reasoning.continuePart();
      else this.content.continuePart();
    }
  }

  /** Feeds a text delta; returns the events it makes ready. */
  push(delta: string): UpstreamEvent[] {
    if (this.finished) throw new Error("ToolCallStreamRewriter: push() after flush()");
    if (this.callHeld && this.mode === "reasoning" && !this.mayEndReasoning(delta)) return [];
    if (this.mode === "region" || this.mode === "fence") this.held.append(delta);
    else {
      const held = this.takeHeldDeltas();
      this.buf = (this.pos === 0 ? this.buf : this.buf.slice(this.pos)) + held + delta;
      this.searchFrom = Math.max(0, this.searchFrom - this.pos);
      this.callSearchFrom = Math.max(0, this.callSearchFrom - this.pos);
      this.rebaseRescans(this.pos);
      this.pos = 0;
    }
    // Waiting on a "maybe": not asked again until the held text has doubled (see MAYBE_RECHECK_SPAN).
    // The held text is not read either, so its string is not flattened per delta.
    if (this.waitSpan > MAYBE_RECHECK_SPAN && this.mode === "text" && this.buf.length - this.pos < 2 * this.waitSpan) return [];
    this.run(false);
    this.waitSpan = this.mode === "text" ? this.buf.length - this.pos : 0;
    return this.drain();
  }

  /** The text is complete: decides everything still held back. */
  /**
   * The text is complete: decides everything still held back. `finish` is why it ended: after
   * `length` (max_tokens, or a stream cut off) a call the output stopped inside is not a call —
   * its arguments are not all there — and its text stays content; after `stop` the model ended
   * it itself, and what is open is closed (`truncated`).
   */
  flush(finish: FinishReason = "stop"): UpstreamEvent[] {
    if (this.finished) return [];
    this.cutOff = finish === "length";
    this.buf = (this.pos === 0 ? this.buf : this.buf.slice(this.pos)) + this.takeHeldDeltas();
    this.searchFrom = Math.max(0, this.searchFrom - this.pos);
    this.callSearchFrom = Math.max(0, this.callSearchFrom - this.pos);
    this.rebaseRescans(this.pos);
    this.pos = 0;
    this.run(true);
    this.content.dropPending();
    this.finished = true;
    if ((this.dropped > 0 || this.overCap > 0) && this.calls.length > 0) {
      const first = this.calls[0]!.call;
      if (this.dropped > 0) {
        first.problems.push(problem("extra_calls_dropped", `parallel_tool_calls is false: ${this.dropped} further call(s) were dropped`));
      }
      if (this.overCap > 0) {
        first.problems.push(
          problem("extra_calls_dropped", `the answer made more than ${MAX_CALLS_PER_ANSWER} calls: ${this.overCap} further call(s) were dropped`),
        );
      }
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
        case "block":
          moved = this.stepBlock(eof);
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

  /**
   * The scan context at `i`. One object, refilled per position: classifyAt reads it and keeps
   * nothing of it, and a fresh object per position was most of the cost of a flood of `[` or `<`.
   */
  private context(i: number, eof: boolean): ScanContext {
    const ctx = this.scanContext;
    ctx.atBoundary = this.atBoundary;
    ctx.atLineStart = this.atLineStart;
    ctx.prev = i > this.pos ? this.buf[i - 1]! : this.prev;
    ctx.eof = eof;
    ctx.header = this.header;
    return ctx;
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
            this.content.dropPending();
            return this.enter(next);
          }
        }
      } else if (this.afterCall && c === "]" && !this.opensCandidate(buf, i, eof)) {
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

  /** Whether a candidate (a marker such as `]<]minimax[>[<tool_call>`) opens at `i`. */
  private opensCandidate(buf: string, i: number, eof: boolean): boolean {
    return classifyAt(buf, i, this.context(i, eof)).kind !== "no";
  }

  private track(c: string): void {
    if (c === "\n") this.atLineStart = true;
    else if (!isSpace(c)) {
      this.atLineStart = false;
      this.atBoundary = false;
      this.afterCall = false;
    }
  }

  /** track() over every character of `text`: only its trailing whitespace decides, so it is read from the end. */
  private trackAll(text: string): void {
    let newline = false;
    let i = text.length - 1;
    for (; i >= 0; i--) {
      const c = text[i]!;
      if (c === "\n") newline = true;
      else if (!isSpace(c)) break;
    }
    if (i >= 0) {
      this.atLineStart = newline;
      this.atBoundary = false;
      this.afterCall = false;
    } else if (newline) this.atLineStart = true;
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
    const out = this.content.take(text);
    if (out === "") return;
    this.header = null;
    this.event({ type: "text", delta: out });
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

  /**
   * Continues in text mode with `text` from `pos` on, which is the held text from `offset` on; the
   * rejected regions being read again stay marked there, and `rescanTo` adds one (held offsets).
   */
  private resumeHeld(text: string, pos: number, offset: number, rescanTo?: number): void {
    this.resume(text, pos);
    const ends = rescanTo === undefined ? this.heldRescans : [...this.heldRescans, rescanTo];
    this.rescans = ends.map((end) => pos + end - offset).filter((end) => end > pos);
  }

  /** `buf` loses its first `by` characters. */
  private rebaseRescans(by: number): void {
    if (this.rescans.length > 0) this.rescans = this.rescans.map((end) => end - by).filter((end) => end > 0);
  }

  private hold(header: number): void {
    this.heldRescans = this.rescans.map((end) => end - this.pos).filter((end) => end > 0);
    this.held = new TextRope(this.buf, this.pos);
    this.heldHeader = header;
    this.buf = "";
    this.pos = 0;
  }

  private enter(candidate: Candidate): boolean {
    this.header = null;
    switch (candidate.kind) {
      case "drop":
        if (candidate.strayClose && this.inlineReasoning) {
          this.emitText(this.buf.slice(this.pos, this.pos + candidate.length));
        }
        this.prev = this.buf[this.pos + candidate.length - 1] ?? this.prev;
        this.pos += candidate.length;
        this.atNewBoundary();
        return true;
      case "reasoning":
        if (this.inlineReasoning) this.emitText(this.buf.slice(this.pos, this.pos + candidate.length));
        else this.content.dropPending();
        this.pos += candidate.length;
        this.enterReasoning(candidate.close, candidate.ends);
        return true;
      case "block":
        this.pos += candidate.length;
        this.block = candidate;
        this.mode = "block";
        this.searchFrom = this.pos;
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
        // A JSON answer fenced as the whole reply: the fence is the model's habit, not the answer.
        this.unfencing = this.jsonResponse && !this.content.started && /^```[ \t]*(?:json)?[ \t]*\r?\n$/i.test(header);
        if (!this.unfencing) this.emitText(header);
        this.mode = "verbatim";
        return true;
      }
      default:
        return false;
    }
  }

  // ---- reasoning ----------------------------------------------------------------------------

  private enterReasoning(close: readonly string[], ends: readonly string[] = []): void {
    this.mode = "reasoning";
    this.reasoningCloses = close;
    this.reasoningEnds = ends;
    this.reasoning.newPart();
    this.searchFrom = this.pos;
    this.callSearchFrom = this.pos;
    this.callHeld = false;
  }

  private emitReasoning(text: string): void {
    if (this.inlineReasoning) {
      if (text !== "" && this.inlineOpener !== "") {
        this.emitText(this.inlineOpener);
        this.inlineOpener = "";
      }
      this.emitText(text);
      return;
    }
    const out = this.reasoning.take(text);
    if (out !== "") this.event({ type: "reasoning", delta: out });
  }

  /**
   * The first explicit call marker (a special token or tag, never bare JSON) in buf[from, to):
   * its index, or the index of a suffix that may still become one ("maybe"), or -1.
   */
  private callMarkerIn(from: number, to: number, eof: boolean): { at: number; maybe: boolean } | null {
    const buf = this.buf;
    for (let i = from; i < to; i++) {
      const c = buf.charCodeAt(i);
      if (c !== 60 /* < */ && c !== 91 /* [ */) continue;
      const found = explicitCallAt(buf, i, eof);
      if (found === "maybe") return { at: i, maybe: true };
      if (found === "yes") return { at: i, maybe: false };
    }
    return null;
  }

  /** Whether a marker that ends the reasoning block may be in `delta` (or begin before it). */
  private mayEndReasoning(delta: string): boolean {
    const window = this.heldTail + delta;
    const markers = [...this.reasoningCloses, ...this.reasoningEnds];
    if (markers.some((m) => window.includes(m))) return true;
    this.heldDeltas.push(delta);
    const longest = Math.max(0, ...markers.map((m) => m.length));
    this.heldTail = window.slice(Math.max(0, window.length - longest + 1));
    return false;
  }

  private takeHeldDeltas(): string {
    if (this.heldDeltas.length === 0) return "";
    const text = this.heldDeltas.join("");
    this.heldDeltas = [];
    return text;
  }

  private closeReasoning(at: number, length: number): true {
    this.emitReasoning(this.buf.slice(this.pos, at));
    if (this.inlineReasoning && length > 0) {
      this.emitText(this.inlineOpener);
      this.inlineOpener = "";
      this.emitText(this.buf.slice(at, at + length));
    }
    this.inlineOpener = "";
    this.pos = at + length;
    this.reasoning.dropPending();
    this.callHeld = false;
    this.mode = "text";
    this.prev = length > 0 ? this.buf[at + length - 1]! : this.prev;
    this.atNewBoundary();
    return true;
  }

  private stepReasoning(eof: boolean): boolean {
    const longest = Math.max(0, ...this.reasoningCloses.map((m) => m.length), ...this.reasoningEnds.map((m) => m.length));
    const end = firstMarker(this.buf, Math.max(this.pos, this.searchFrom - longest + 1), this.reasoningCloses, this.reasoningEnds);
    // Everything from `pos` on is held while a call marker opened inside the block: if the block
    // closes after all, it was all reasoning (models draft calls while thinking); if the output
    // ends first, the reasoning ended at the marker and the call is read.
    if (this.callHeld) {
      if (end) return this.closeReasoning(end.at, end.length);
      if (!eof) {
        this.searchFrom = this.buf.length;
        this.heldTail = this.buf.slice(Math.max(this.pos, this.buf.length - longest + 1));
        return false;
      }
      this.reasoning.dropPending();
      this.inlineOpener = "";
      this.callHeld = false;
      this.mode = "text";
      this.atNewBoundary();
      return true;
    }
    const limit = end ? end.at : this.buf.length;
    const call = this.tools.enabled ? this.callMarkerIn(Math.max(this.pos, this.callSearchFrom), limit, eof) : null;
    if (call && !call.maybe) {
      this.emitReasoning(this.buf.slice(this.pos, call.at));
      this.pos = call.at;
      this.callHeld = true;
      this.searchFrom = call.at;
      return true;
    }
    if (end) return this.closeReasoning(end.at, end.length);
    let keep = 0;
    if (!eof) {
      for (const m of [...this.reasoningCloses, ...this.reasoningEnds]) keep = Math.max(keep, heldSuffix(this.buf, this.pos, m));
      if (call) keep = Math.max(keep, this.buf.length - call.at);
    }
    this.emitReasoning(this.buf.slice(this.pos, this.buf.length - keep));
    this.pos = this.buf.length - keep;
    this.searchFrom = this.buf.length;
    this.callSearchFrom = this.pos;
    if (eof) this.reasoning.dropPending();
    return false;
  }

  // ---- blocks -------------------------------------------------------------------------------

  private stepBlock(eof: boolean): boolean {
    const { into, close, ends } = this.block!;
    const markers = [...close, ...ends];
    const longest = Math.max(...markers.map((m) => m.length));
    const hit = firstMarker(this.buf, Math.max(this.pos, this.searchFrom - longest + 1), close, ends);
    let keep = 0;
    if (!hit && !eof) for (const m of markers) keep = Math.max(keep, heldSuffix(this.buf, this.pos, m));
    const to = hit ? hit.at : this.buf.length - keep;
    const text = this.buf.slice(this.pos, to);
    if (into === "content") {
      this.trackAll(text);
      this.emitText(text);
    }
    this.pos = to;
    this.searchFrom = this.buf.length;
    if (!hit) return false;
    this.pos += hit.length;
    this.block = null;
    this.mode = "text";
    this.atNewBoundary();
    return true;
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
    if (eof && this.cutOff && parsed?.calls.some((c) => c.problems.some((p) => p.code === "truncated"))) {
      return this.passThrough(consumed);
    }
    // Bare calls right after a closed block may be the model echoing it (LFM2 writes the list
    // again after `<|tool_call_end|>`): the same calls again are dropped, not made twice. Repeats
    // inside one list (`f(x); f(x)`) are the model asking twice, and stay.
    const echo = this.afterCall && header === 0 && this.lastBlock !== null;
    const before = this.calls.length;
    if (!this.accept(parsed, spec.strict === true, echo)) return this.reject(consumed);
    this.lastBlock = header > 0 && end.closed ? this.calls.slice(before).map((c) => c.call) : null;
    this.prev = held.charAt(consumed - 1) || this.prev;
    const after = held.rest(consumed);
    if (parsed!.rest !== undefined) this.resumeHeld(body.slice(parsed!.rest) + after.text.slice(after.pos), 0, header + parsed!.rest);
    else this.resumeHeld(after.text, after.pos, consumed);
    return true;
  }

  /** Emits what a parsed region holds; false when it holds no call after all. */
  private accept(parsed: RegionParse | null, strict: boolean, echo = false): boolean {
    if (!parsed) return false;
    // Past the cap a region its marker calls a call region is dropped without scoring; one found
    // in prose (strict) still has to prove it is a call, so it is scored, then dropped.
    if (this.calls.length + this.dropped >= MAX_CALLS_PER_ANSWER && !strict && parsed.calls.length > 0 && parsed.content === undefined) {
      if (this.parallel) this.overCap += parsed.calls.length;
      else this.dropped += parsed.calls.length;
      this.content.dropPending();
      this.atNewBoundary();
      this.afterCall = true;
      return true;
    }
    const finalized = parsed.calls.map((c) => finalizeCall(c, this.tools));
    const resolved = finalized.filter((f) => f !== null);
    if (strict && (resolved.length < parsed.calls.length || !resolved.every((f) => f.fits))) return false;
    if (echo && parsed.content === undefined && this.repeatsLastBlock(resolved.map((f) => f.call))) {
      const last = this.calls[this.calls.length - 1]!.call;
      last.problems.push(problem("echo_dropped", "the model wrote this call again right after it; the repetition was dropped"));
      last.score = scoreOf(last.problems);
      this.content.dropPending();
      this.atNewBoundary();
      this.afterCall = true;
      return true;
    }
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
      this.content.dropPending();
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
    const marker = held.slice(0, this.heldHeader);
    if (isSpecialToken(marker)) {
      // A special token that announces calls (`[TOOL_CALLS]`, `<|tool_call_start|>`) is never
      // meant for the reader: followed by something that is not a call, it is dropped, and what
      // follows is read as text.
      const after = held.rest(marker.length);
      this.resumeHeld(after.text, after.pos, marker.length);
      return true;
    }
    if (consumed > RESCAN_LIMIT || this.heldRescans.length >= RESCAN_DEPTH) return this.passThrough(consumed);
    const first = held.charAt(0);
    this.track(first);
    this.prev = first;
    this.emitText(first);
    const after = held.rest(1);
    this.resumeHeld(after.text, after.pos, 1, consumed);
    return true;
  }

  /** Whether `calls` are the calls of the block just closed, the same names and arguments in order. */
  private repeatsLastBlock(calls: ScoredToolCall[]): boolean {
    const block = this.lastBlock;
    if (!block || calls.length !== block.length) return false;
    return calls.every((c, i) => c.function.name === block[i]!.function.name && sameJson(c.function.arguments, block[i]!.function.arguments));
  }

  /** The held region's first `consumed` characters are text, as they are. */
  private passThrough(consumed: number): true {
    const held = this.held;
    const text = held.slice(0, consumed);
    this.trackAll(text);
    this.emitText(text);
    const after = held.rest(consumed);
    this.resumeHeld(after.text, after.pos, consumed);
    return true;
  }

  private emitCall(call: ScoredToolCall): void {
    if (!this.parallel && this.calls.length > 0) {
      this.dropped++;
      return;
    }
    if (this.calls.length >= MAX_CALLS_PER_ANSWER) {
      this.overCap++;
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
    this.resumeHeld(after.text, after.pos, consumed);

    // The inside of the fence is a complete output of its own.
    const inner = new ToolCallStreamRewriter(this.tools);
    const events = [...inner.push(body), ...inner.flush(closeAt < 0 && this.cutOff ? "length" : "stop")];
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
    this.content.dropPending();
    this.atNewBoundary();
    this.afterCall = true;
    return true;
  }

  private stepVerbatim(eof: boolean): boolean {
    const found = findFenceClose(this.buf, this.pos, eof);
    if (typeof found === "number") {
      const text = this.buf.slice(this.pos, this.unfencing ? found : found + 3);
      this.pos = found + 3;
      this.unfencing = false;
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
