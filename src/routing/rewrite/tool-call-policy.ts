// The tool-call policy stage: a call scoring below the model's minToolCallScore is tried again,
// constrained, or elsewhere; the best answer is delivered, flagged when none reached the score.
import { ProxyError } from "../../errors/proxy-error.ts";
import { adapterOf } from "../../upstreams/registry/adapters.ts";
import { finalOutcome, targetOutcomes, type TargetFailure } from "../attempt/final-outcome.ts";
import type { EventPull } from "../../events/event-source.ts";
import type { UpstreamEvent } from "../../events/events.ts";
import type { ToolCallReport } from "../../toolcalls/index.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";

/** One started attempt, its events already through the tool-call rewriter. */
export interface RewrittenAttempt {
  target: Target;
  first: UpstreamEvent;
  events: EventPull;
  /** Scores so far (complete once the finish event has passed). */
  reports(): ToolCallReport[];
  /** Events read ahead to score the call, when the policy buffered them. */
  buffered?: UpstreamEvent[];
}

export interface PolicyOutcome {
  attempt: RewrittenAttempt;
  /** Targets tried, retries included. */
  attempts: number;
  belowMinScore: boolean;
}

/** One step of the policy: a target, plainly or constrained (tools in the prompt under a grammar). */
export interface PolicyStep {
  target: Target;
  constrained: boolean;
}

/**
 * The minimum-score policy: a call scoring below `minScore` gets one constrained retry on the same
 * target (prompt mode with a grammar built from the tools), then the next target; if none does
 * better, the best answer is delivered with its scores and flagged. A stream is only retried while
 * nothing but held-back call text exists (its first event is the call); otherwise it is delivered
 * and flagged.
 *
 * The pipeline drives it (routing/pipeline.ts): for each of `steps` it calls `beforeStep`, starts the
 * step's attempt, and reports it with `consider` (an outcome ends the loop) or `failed`; `end()` is
 * the outcome when every step was taken.
 */
export class ToolCallPolicy {
  /** Each target, then its constrained retry where its kind can constrain its output. */
  readonly steps: PolicyStep[];
  private best: { attempt: RewrittenAttempt; score: number; attempts: number; target: Target } | null = null;
  /** Each target's last failure: the client gets the one the shared precedence picks (attempt/final-outcome.ts). */
  private readonly failures = new Map<Target, TargetFailure>();
  private attempts = 0;

  constructor(
    targets: Target[],
    private readonly minScore: number,
    private readonly stream: boolean,
    /** An answer that was generated and then not delivered: retries count toward usage and limits. */
    private readonly onDiscard?: (events: UpstreamEvent[]) => void,
  ) {
    this.steps = targets.flatMap((target): PolicyStep[] =>
      adapterOf(target).constrained ? [{ target, constrained: false }, { target, constrained: true }] : [{ target, constrained: false }],
    );
  }

  /** Before `step` starts: a streamed best answer kept open holds its slot on its server, so it is read whole before that server is asked again. */
  async beforeStep(step: PolicyStep): Promise<void> {
    this.attempts++;
    const best = this.best;
    if (best && this.stream && best.target === step.target) best.attempt = await bufferAll(best.attempt);
  }

  /** `step` failed before its first event: the next step is tried, unless no retry would help (then this throws). */
  failed(step: PolicyStep, e: unknown): void {
    const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: String(e) });
    this.failures.set(step.target, { target: step.target.name, error: err, ...(step.target.implicit ? { implicit: true } : {}) });
    if (!err.retryable) {
      err.attempts = this.attempts;
      err.outcomes = targetOutcomes([...this.failures.values()]);
      throw err;
    }
  }

  /** `step` started `attempt`: the outcome when it is delivered, or null when the next step is tried. */
  async consider(step: PolicyStep, attempt: RewrittenAttempt): Promise<PolicyOutcome | null> {
    const attempts = this.attempts;
    if (this.stream && attempt.first.type !== "toolCall") {
      // Text already flows to the client: deliver, and flag at the end if a call scores low.
      this.discardBest();
      return { attempt, attempts, belowMinScore: false };
    }
    const buffered = this.stream ? await bufferUntilFirstCallScored(attempt) : await bufferAll(attempt);
    const score = lowestScore(buffered.reports());
    if (score >= this.minScore) {
      this.discardBest();
      return { attempt: buffered, attempts, belowMinScore: false };
    }
    if (!this.best || score > this.best.score) {
      this.discardBest();
      this.best = { attempt: buffered, score, attempts, target: step.target };
    } else {
      this.discard(buffered);
    }
    return null;
  }

  /** Every step taken: the best answer, flagged; or the failure the shared precedence picks. */
  end(): PolicyOutcome {
    if (this.best) return { attempt: this.best.attempt, attempts: this.attempts, belowMinScore: true };
    const failures = [...this.failures.values()];
    const err = finalOutcome(failures)?.error ?? new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, message: "No target is available for this model." });
    err.attempts = this.attempts;
    err.outcomes = targetOutcomes(failures);
    throw err;
  }

  private discard(a: RewrittenAttempt): void {
    a.events.cancel();
    this.onDiscard?.(a.buffered ?? []);
  }

  private discardBest(): void {
    if (this.best) this.discard(this.best.attempt);
    this.best = null;
  }
}

function lowestScore(reports: ToolCallReport[]): number {
  return reports.length ? Math.min(...reports.map((r) => r.score)) : 1;
}

/** Non-stream: the whole answer, replayable. */
async function bufferAll(attempt: RewrittenAttempt): Promise<RewrittenAttempt> {
  const events = [attempt.first];
  for (let e = await attempt.events.next(); e; e = await attempt.events.next()) events.push(e);
  return { ...attempt, events: replay(events.slice(1)), buffered: events };
}

/**
 * Stream whose first event is a call: the call is complete (the rewriter emits it once parsed), so
 * its score is known after the events that belong to it; read on until the next call or the end.
 */
async function bufferUntilFirstCallScored(attempt: RewrittenAttempt): Promise<RewrittenAttempt> {
  const events: UpstreamEvent[] = [];
  let e: UpstreamEvent | null;
  for (;;) {
    e = await attempt.events.next();
    if (!e) break;
    events.push(e);
    if (e.type !== "toolCall" || e.index !== (attempt.first as { index: number }).index) break;
  }
  const rest = attempt.events;
  const queue = [...events];
  return {
    ...attempt,
    buffered: [attempt.first, ...events],
    events: {
      async next() {
        return queue.length ? queue.shift()! : rest.next();
      },
      cancel: () => rest.cancel(),
    },
  };
}

function replay(events: UpstreamEvent[]): EventPull {
  let i = 0;
  return {
    next: async () => (i < events.length ? events[i++]! : null),
    cancel: () => {},
  };
}
