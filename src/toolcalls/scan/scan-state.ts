// The state the rewriter's modes share: the text not decided yet (or the region held whole), where
// the cursor stands (described by what came before it), and where events and calls go. Each mode
// is a function over it (text-mode.ts, reasoning-mode.ts, block-mode.ts, region-mode.ts,
// fence-mode.ts); stream-rewriter.ts feeds it and runs them.

import type { Candidate, RegionSpec, ScanContext } from "../dialects/candidate.ts";
import type { ToolSet } from "../scoring/tool-set.ts";
import { TextRope } from "../text/text-rope.ts";
import { CallList } from "./call-list.ts";
import { Output } from "./output.ts";
import type { RegionTracker } from "./region-end.ts";
import type { KnownRegion } from "./region-verdict.ts";
import type { RewriteOptions } from "./rewrite-options.ts";
import { isSpace } from "./text-scan.ts";

/** The empty list of rescans, shared (never changed: the lists are replaced, not edited). */
const NONE: readonly number[] = Object.freeze([]);

export type Mode = "text" | "reasoning" | "block" | "region" | "fence" | "verbatim";

export class ScanState {
  readonly tools: ToolSet;
  readonly out: Output;
  readonly calls: CallList;
  /** `jsonResponse`: a fence around the whole answer is the model's habit, not the answer. */
  readonly jsonResponse: boolean;
  /** The output was cut off (`flush("length")`): a call it stopped inside is not delivered. */
  cutOff = false;

  mode: Mode = "text";
  /** Text not decided yet is `buf` from `pos` on (text, reasoning, block and verbatim modes). */
  buf = "";
  pos = 0;
  /** A held region or fence, its opening marker included (region and fence modes). */
  held = new TextRope();
  heldHeader = 0;
  /** Text mode: where the rejected regions being read again end in `buf`, outermost first. */
  rescans: readonly number[] = NONE;
  /** Region and fence modes: the same, in `held` (those that go on past its start). */
  heldRescans: readonly number[] = NONE;
  /** The region being held (region mode): its end already known, or the tracker that finds it. */
  region: { spec: RegionSpec; known: KnownRegion } | { spec: RegionSpec; tracker: RegionTracker } | null = null;
  /** Empty regions already read and rejected, by spec or marker (region-mode.ts decideAtOnce). */
  readonly emptyRegions = new Map<RegionSpec | string, number>();
  /** Where the search for the current mode's closing marker goes on from. */
  searchFrom = 0;

  // Where the text cursor stands, described by what came before it.
  atBoundary = true;
  atLineStart = true;
  prev = "";
  afterCall = false;

  // Reasoning mode (reasoning-mode.ts).
  /** Markers that close the reasoning block (consumed), and markers that end it (not consumed). */
  reasoningCloses: readonly string[] = [];
  reasoningEnds: readonly string[] = [];
  callSearchFrom = 0;
  /** `buf` from `pos` on starts with a call marker found inside the reasoning block. */
  callHeld = false;
  /**
   * While `callHeld`, deltas in which no marker ending the block can be, not yet added to `buf`
   * (adding each to the held string and searching it would copy the whole string per delta), and
   * the end of the text before them, where such a marker may have begun.
   */
  heldDeltas: string[] = [];
  heldTail = "";

  /** Verbatim mode: the fence being read is the answer's own (`jsonResponse`), and is not sent. */
  unfencing = false;
  /** The block being read (block mode). */
  block: Extract<Candidate, { kind: "block" }> | null = null;
  /** A call header the prompt opened (`>>>`), until the output's first decision. */
  header: string | null = null;

  /** One scan context, refilled per position (context()). */
  private readonly scanContext: ScanContext;

  constructor(tools: ToolSet, options: RewriteOptions) {
    this.tools = tools;
    this.scanContext = { tools, atBoundary: true, atLineStart: true, prev: "", eof: false, header: null };
    this.out = new Output(options.reasoningFormat === "none");
    this.calls = new CallList(options.parallel_tool_calls !== false, this.out);
    this.jsonResponse = options.jsonResponse === true;
  }

  /**
   * The scan context at `i`. One object, refilled per position: classifyAt reads it and keeps
   * nothing of it, and a fresh object per position was most of the cost of a flood of `[` or `<`.
   */
  context(i: number, eof: boolean): ScanContext {
    const ctx = this.scanContext;
    ctx.atBoundary = this.atBoundary;
    ctx.atLineStart = this.atLineStart;
    ctx.prev = i > this.pos ? this.buf[i - 1]! : this.prev;
    ctx.eof = eof;
    ctx.header = this.header;
    return ctx;
  }

  /** `buf` drops its decided text (before `pos`) and takes `held` and `delta`; the offsets into it follow. */
  rebase(held: string, delta: string): void {
    this.buf = (this.pos === 0 ? this.buf : this.buf.slice(this.pos)) + held + delta;
    this.searchFrom = Math.max(0, this.searchFrom - this.pos);
    this.callSearchFrom = Math.max(0, this.callSearchFrom - this.pos);
    this.rebaseRescans(this.pos);
    this.pos = 0;
  }

  takeHeldDeltas(): string {
    if (this.heldDeltas.length === 0) return "";
    const text = this.heldDeltas.join("");
    this.heldDeltas = [];
    return text;
  }

  track(c: string): void {
    if (c === "\n") this.atLineStart = true;
    else if (!isSpace(c)) {
      this.atLineStart = false;
      this.atBoundary = false;
      this.afterCall = false;
    }
  }

  /** track() over every character of `text`: only its trailing whitespace decides, so it is read from the end. */
  trackAll(text: string): void {
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

  atNewBoundary(): void {
    this.atBoundary = true;
    this.atLineStart = true;
  }

  /** Calls were just read: whitespace before them goes with them, and what follows starts afresh. */
  afterCalls(): void {
    this.out.content.dropPending();
    this.atNewBoundary();
    this.afterCall = true;
  }

  emitText(text: string): void {
    if (this.out.text(text)) this.header = null;
  }

  emitReasoning(text: string): void {
    const out = this.out;
    if (out.inlineReasoning) {
      if (text !== "" && out.inlineOpener !== "") {
        this.emitText(out.inlineOpener);
        out.inlineOpener = "";
      }
      this.emitText(text);
      return;
    }
    out.reasoningText(text);
  }

  /** Continues in text mode with `text` from `pos` on. */
  resume(text: string, pos: number): void {
    this.buf = text;
    this.pos = pos;
    this.mode = "text";
  }

  /**
   * Continues in text mode with `text` from `pos` on, which is the held text from `offset` on; the
   * rejected regions being read again stay marked there, and `rescanTo` adds one (held offsets).
   */
  resumeHeld(text: string, pos: number, offset: number, rescanTo?: number): void {
    this.resume(text, pos);
    const held = this.heldRescans;
    // Most regions are not inside a rejected one: no list to build (a flood of markers enters one
    // region per marker, and three arrays per region were a good part of its garbage).
    if (held.length === 0 && (rescanTo === undefined || rescanTo <= offset)) {
      this.rescans = NONE;
      return;
    }
    const ends = rescanTo === undefined ? held : [...held, rescanTo];
    this.rescans = ends.map((end) => pos + end - offset).filter((end) => end > pos);
  }

  /** `buf` loses its first `by` characters. */
  rebaseRescans(by: number): void {
    if (this.rescans.length > 0 && by !== 0) this.rescans = this.rescans.map((end) => end - by).filter((end) => end > 0);
  }

  /** Holds the text from `pos` on as a rope (a region or a fence), `header` its opening marker's length. */
  hold(header: number): void {
    this.heldRescans = this.rescans.length === 0 ? NONE : this.rescans.map((end) => end - this.pos).filter((end) => end > 0);
    this.held = new TextRope(this.buf, this.pos);
    this.heldHeader = header;
    this.buf = "";
    this.pos = 0;
  }
}
