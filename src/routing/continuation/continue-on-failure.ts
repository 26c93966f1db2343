// The continue-on-failure stage: an answer whose upstream fails mid-answer goes on on another target
// that can continue it (an assistant prefill), or, when only the server's chat parser failed, on the
// same server; the client sees one answer (ContinuingEvents). A continuation is the attempt stage
// started again (routing/attempt/), from a plan of the targets that can continue the answer, and an
// answer like any other (routing/rewrite/).
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import { adapterOf, capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import type { Upstream } from "../../upstreams/upstream.ts";
import { CONTINUATION_PRIORITY } from "../admission/queue-place.ts";
import { attemptTargets, openAttempt, type AttemptOptions, type Started } from "../attempt/attempt-targets.ts";
import { offersTools, rewriteAnswer } from "../rewrite/rewrite-stage.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";
import { continuationRequest, type Written } from "./continuation-request.ts";
import { ContinuingEvents, type Continuation, type ContinuingOptions } from "./continuing-events.ts";

/** How an answer may be continued: the model's targets, `resume.maxResumes`, and why it never can (continuationBlocker). */
export interface ContinuationPlan {
  targets: Target[];
  maxResumes: number;
  blocked: string | null;
}

/** Whether `target` can continue an answer to `request` (an assistant prefill; not under a tool grammar that would start over). */
export function canContinue(target: Target, request: AttemptOptions["request"]): boolean {
  const continues = capabilitiesOf(target).continues;
  if (!continues) return false;
  return continues.withPromptTools || !(offersTools(request) && "tools" in target && target.tools === "prompt");
}

/**
 * `started` made continuable: its events wrapped so that a mid-answer failure is continued elsewhere
 * (ContinuingEvents), with `continuing` set. Unchanged when nothing could continue it (a browser session
 * alone, resumes off, or a request that can never be continued).
 */
export function continueOnFailure(started: Started, opts: AttemptOptions, plan: ContinuationPlan): Started & { continuing?: ContinuingEvents } {
  if (plan.maxResumes <= 0 || plan.blocked !== null) return started;
  // Nothing to continue on: the events are not wrapped at all. A server alone continues its own
  // answer only when its chat parser refused the rest (error.unparsed).
  if (!plan.targets.some((t) => canContinue(t, opts.request))) return started;
  const source = new Continuations(started, opts, plan);
  const continuing = new ContinuingEvents(started.first, started.events, started.target.name, { maxResumes: plan.maxResumes, blocked: plan.blocked, open: (written, error) => source.open(written, error) });
  return { ...started, events: continuing, continuing };
}

/** Where an answer's continuations come from: the plan's other targets, in turn, or the same server's raw text. */
class Continuations {
  /** Targets by identity: two targets may share a name (one host, two paths). */
  private readonly failed = new Set<Target>();
  private writing: Target;

  constructor(
    private readonly started: Started,
    private readonly opts: AttemptOptions,
    private readonly plan: ContinuationPlan,
  ) {
    this.writing = started.target;
  }

  async open(written: Written, error: ErrorInfo): ReturnType<ContinuingOptions["open"]> {
    const { started, opts } = this;
    // A refused answer was generated to its end, held-back text included, and its bound is all that
    // is known of it: a continuation or a replay after it is one more generation, run only when one
    // was reserved, and the refused attempt is charged its bound once the next one runs (when none
    // does, the refusal ends the answer and the meter charges it).
    if (error.unparsed && opts.refusals?.take() === false) return null;
    const next = await this.openAfter(written, error);
    if (next && error.unparsed) opts.refusals?.refusedAnswer(next.replay ? 0 : written.tokens);
    return next;
  }

  private async openAfter(written: Written, error: ErrorInfo): ReturnType<ContinuingOptions["open"]> {
    const { started, opts } = this;
    // Reasoning alone, refused by the chat parser of the server that wrote it: the same answer
    // again, as raw text (text written is continued instead: a replay would reproduce what the
    // parser refused, a stray byte included, and the raw completion is parsed for content too).
    if (error.unparsed && this.writing === started.target && written.text === "") return replayRaw(started.upstream, started.target, opts);
    const request = continuationRequest(opts.request, written);
    if (!request) return null;
    // A server whose parser refused the model's output is not broken: it may write the rest itself.
    // One that failed is not asked again at once; one that failed earlier in this answer may be,
    // after every other (in a pool whose servers restart, it may be the one back up), so an answer
    // goes on while the pool has a server to continue it, up to resume.maxResumes times.
    const justFailed = error.unparsed ? null : this.writing;
    if (justFailed) this.failed.add(justFailed);
    const able = this.plan.targets.filter((t) => canContinue(t, opts.request) && t !== justFailed);
    const rest = [...able.filter((t) => !this.failed.has(t)), ...able.filter((t) => this.failed.has(t))];
    if (!rest.length) return null;
    // First in line if every slot is taken: this answer is already under way.
    const s = await attemptTargets(rest, { ...opts, request, priority: CONTINUATION_PRIORITY });
    this.writing = s.target;
    // The prefill's tokens on the continuing server, for the answer's prompt_tokens: asked beside
    // the continuation, which does not wait for it (only its usage, at the end, does, at most the
    // count's 1 s timeout).
    const prefillTokens = adapterOf(s.target).countTextTokens?.(s.target, written.text, { env: opts.env, requestId: opts.requestId, timeoutMs: 1000, signal: opts.signal }).catch(() => undefined);
    return { target: s.target.name, first: s.first, events: s.events, attempts: s.attempts, ...(prefillTokens ? { prefillTokens } : {}) };
  }
}

/**
 * The answer `upstream` (the chat endpoint of `target`) wrote and its parser refused, again from its
 * start: the same request as raw text (its seed makes it the same text), through the rewrite stage.
 * Null when the upstream has no raw form; a throw when the replay fails before its first event.
 */
async function replayRaw(upstream: Upstream, target: Target, opts: AttemptOptions): Promise<Continuation | null> {
  const raw = upstream.withoutChatParser?.();
  if (!raw) return null;
  const ctx = { requestId: opts.requestId, ...(opts.clientRequestId !== undefined ? { clientRequestId: opts.clientRequestId } : {}), signal: opts.signal, responseStartMs: opts.config.timeouts.responseStartMs, deadlines: opts.deadlines, env: opts.env };
  const { first, events } = await openAttempt(raw, target, ctx, opts, Date.now());
  const answer = await rewriteAnswer(opts.request, { first, events, raw: { generationPrompt: raw.generationPrompt ?? "" } });
  if (!answer) return null;
  return { target: target.name, first: answer.first, events: answer.events, attempts: 1, replay: true };
}
