// An answer's events that survive its upstream failing mid-answer: another target (or a raw replay)
// takes over, and the client sees one unbroken answer.
import { classifyFailure } from "../../health/classify-failure.ts";
import { ProxyError, type ErrorInfo } from "../../errors/proxy-error.ts";
import type { EventPull } from "../../events/event-source.ts";
import type { UpstreamEvent } from "../../events/events.ts";
import { EchoStrip } from "./echo-strip.ts";
import type { Written } from "./continuation-request.ts";

/** Where an answer was continued (`x_switchyard.resumes`). */
export interface ResumePoint {
  from: string;
  to: string;
  /** Why `from` stopped: its error code. */
  code: string;
  /** How much of the answer `from` had written: characters of content, and tokens (content and reasoning). */
  after_chars: number;
  after_tokens: number;
}

/** Another target's continuation of the answer: its first event and the rest. */
export interface Continuation {
  target: string;
  first: UpstreamEvent;
  events: EventPull;
  /** Tries it took (same-target retries included). */
  attempts: number;
  /**
   * The tokens the prefill (what was written) is on the continuing server: its prompt holds them.
   * Settles within its own timeout; undefined when it cannot tell, and the deltas written stand in.
   */
  prefillTokens?: Promise<number | undefined>;
  /**
   * Not a continuation but the same answer again from its start (the same server's raw text of the
   * same request, with the same seed): it repeats the reasoning and text written, which are cut off,
   * and its usage is the whole answer's.
   */
  replay?: boolean;
}

export interface ContinuingOptions {
  /** Continuations allowed for this answer (`resume.maxResumes`). */
  maxResumes: number;
  /** Why the request can never be continued (continuationBlocker), or null. */
  blocked: string | null;
  /**
   * Asks a target to go on after `written`, which `error` ended: another than the one that failed,
   * or the same when only its chat parser did (`error.unparsed`). Null or a throw when none can.
   */
  open(written: Written, error: ErrorInfo): Promise<Continuation | null>;
}

/**
 * An answer's events that survive their upstream failing mid-answer: on a retryable failure after
 * the first event (a broken connection, an error frame, a stall), another target is asked to
 * continue from what was written, and its events follow as if nothing happened — its echo of the
 * prefill cut off (EchoStrip), its usage counted with the tokens already written. When only the
 * server's chat parser failed (error.unparsed), the same server may go on: it continues the text, or
 * replays an answer that had only reasoning so far (its repeat of the reasoning cut off). The encoder sees
 * one answer, so the client keeps one id. Nothing is continued inside a tool call (its partial
 * arguments were parsed by the failed server and cannot be handed back as written), after the
 * finish, past `maxResumes`, or when the request rules it out; then the failure stands, as an error
 * event.
 */
export class ContinuingEvents implements EventPull {
  readonly resumes: ResumePoint[] = [];
  /** Tries taken by continuations. */
  extraAttempts = 0;
  private readonly written: Written = { text: "", reasoning: "", tokens: 0 };
  private tokensBefore = 0;
  /** The continuing server's count of the prefill's tokens, until the continuation's usage has read it. */
  private prefillCount: Promise<number | undefined> | undefined;
  private prefillTokens: number | undefined;
  private ready: UpstreamEvent[] = [];
  private pendingFirst: UpstreamEvent | undefined;
  private held: UpstreamEvent | undefined;
  private echo: EchoStrip | undefined;
  private toolCalled = false;
  private finished = false;
  private cancelled = false;

  constructor(
    first: UpstreamEvent,
    private inner: EventPull,
    private target: string,
    private readonly opts: ContinuingOptions,
  ) {
    this.track(first);
  }

  /** The target writing the answer now. */
  get current(): string {
    return this.target;
  }

  nextNow(): UpstreamEvent | undefined {
    if (this.ready.length) return this.ready.shift();
    if (this.pendingFirst || this.held || this.echo) return undefined;
    const e = this.inner.nextNow?.();
    if (e === undefined) return undefined;
    // An error may be continued, and a continued answer's usage waits for the prefill's count: next() does both.
    if (e.type === "error" || (e.type === "usage" && this.prefillCount)) {
      this.held = e;
      return undefined;
    }
    return this.track(e);
  }

  async next(): Promise<UpstreamEvent | null> {
    for (;;) {
      if (this.ready.length) return this.ready.shift()!;
      if (this.cancelled) return null;
      let e: UpstreamEvent | null;
      // The request's own timeouts.totalMs ran out: the answer is longer than the request allows,
      // and would be on any server; continuing it elsewhere would only give a runaway more time.
      let ownDeadline = false;
      if (this.held) [e, this.held] = [this.held, undefined];
      else if (this.pendingFirst) [e, this.pendingFirst] = [this.pendingFirst, undefined];
      else {
        try {
          e = await this.inner.next();
        } catch (err) {
          const pe = err instanceof ProxyError ? err : new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: String(err) });
          ownDeadline = classifyFailure(pe) === "deadline";
          e = { type: "error", error: pe.toInfo() };
        }
      }
      if (e?.type === "error") {
        if (!ownDeadline && (await this.continueAfter(e.error))) continue;
        return this.notStarted ? { type: "error", error: { ...e.error, message: `${e.error.message} ${this.notStarted}` } } : e;
      }
      if (e?.type === "usage" && this.prefillCount) {
        this.prefillTokens = await this.prefillCount;
        this.prefillCount = undefined;
      }
      if (this.echo) {
        const out = e === null ? ("diverged" as const) : this.echo.push(e);
        if (out === "diverged") {
          this.cancel();
          return this.notContinued();
        }
        if (this.echo.done) this.echo = undefined;
        for (const o of out) this.ready.push(this.track(o));
        continue;
      }
      if (e === null) return null;
      return this.track(e);
    }
  }

  cancel(): void {
    this.cancelled = true;
    this.inner.cancel();
  }

  /** What the client is handed: recorded as written; a continuation's usage counts the tokens before it. */
  private track(e: UpstreamEvent): UpstreamEvent {
    switch (e.type) {
      case "text":
        this.written.text += e.delta;
        this.written.tokens++;
        return e;
      case "reasoning":
        this.written.reasoning += e.delta;
        this.written.tokens++;
        return e;
      case "toolCall":
        this.toolCalled = true;
        return e;
      case "finish":
        this.finished = true;
        return e;
      case "usage": {
        if (!this.resumes.length) return e;
        // The continuation's prompt held the tokens written before it (as its tokenizer counts the
        // prefill); its completion did not (those were generated before, one a delta).
        const promptTokens = Math.max(0, e.usage.promptTokens - (this.prefillTokens ?? this.tokensBefore));
        const usage = { ...e.usage, promptTokens, completionTokens: e.usage.completionTokens + this.tokensBefore };
        if (usage.cachedTokens !== undefined) usage.cachedTokens = Math.min(usage.cachedTokens, promptTokens);
        return { ...e, usage };
      }
      default:
        return e;
    }
  }

  private lastError: ErrorInfo | undefined;
  /** Why the last continuation asked for could not start, when it was asked for and threw. */
  private notStarted: string | undefined;

  /** Asks for a continuation after `error`; true when one now feeds the answer. */
  private async continueAfter(error: ErrorInfo): Promise<boolean> {
    this.lastError = error;
    this.notStarted = undefined;
    if (this.cancelled || this.opts.blocked !== null || this.resumes.length >= this.opts.maxResumes) return false;
    if (error.retryable !== true || this.toolCalled || this.finished) return false;
    // Reasoning alone cannot be continued (a trailing assistant message has no content), only replayed.
    if (this.written.text === "" && !(error.unparsed && this.written.reasoning !== "")) return false;
    let next: Continuation | null;
    try {
      next = await this.opts.open({ ...this.written }, error);
    } catch (e) {
      // Said with the failure that stands, so a client (and its operator) knows it was tried.
      this.notStarted = `Continuing the answer failed too: ${e instanceof Error ? e.message : String(e)}`;
      next = null;
    }
    if (!next || this.cancelled) {
      if (next) next.events.cancel();
      return false;
    }
    this.resumes.push({ from: this.target, to: next.target, code: error.code, after_chars: this.written.text.length, after_tokens: this.written.tokens });
    this.extraAttempts += next.attempts;
    // A replay's usage counts the whole answer already.
    this.tokensBefore = next.replay ? 0 : this.written.tokens;
    // Asked beside the continuation; only its usage, at the end, waits for it.
    this.prefillCount = next.prefillTokens;
    this.prefillTokens = undefined;
    this.target = next.target;
    this.inner = next.events;
    this.pendingFirst = next.first;
    this.echo = new EchoStrip(this.written.text, next.replay ? this.written.reasoning : "");
    return true;
  }

  /** A continuation that did not continue the answer: the failure that asked for it stands. */
  private notContinued(): UpstreamEvent {
    const e = this.lastError!;
    return { type: "error", error: { ...e, message: `${e.message} ${this.target} was asked to continue the answer but began a different one, so the answer ends here.` } };
  }
}
