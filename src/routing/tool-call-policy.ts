import { ProxyError } from "../errors/proxy-error.ts";
import { finalOutcome, targetOutcomes, type TargetFailure } from "./final-outcome.ts";
import type { EventPull } from "../events/event-source.ts";
import type { UpstreamEvent } from "../events/events.ts";
import type { ToolCallReport } from "../toolcalls/index.ts";
import type { Target } from "./target.ts";

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

/**
 * The minimum-score policy: a call scoring below `minScore` gets one constrained retry on the same
 * target (prompt mode with a grammar built from the tools), then the next target; if none does
 * better, the best answer is delivered with its scores and flagged. A stream is only retried while
 * nothing but held-back call text exists (its first event is the call); otherwise it is delivered
 * and flagged.
 */
export async function applyToolCallPolicy(opts: {
  targets: Target[];
  minScore: number;
  stream: boolean;
  start(target: Target, constrained: boolean): Promise<RewrittenAttempt>;
  /** An answer that was generated and then not delivered: retries count toward usage and limits. */
  onDiscard?(events: UpstreamEvent[]): void;
}): Promise<PolicyOutcome> {
  type Step = { t: Target; constrained: boolean };
  const steps = opts.targets.flatMap((t: Target): Step[] =>
    t.kind === "llama" ? [{ t, constrained: false }, { t, constrained: true }] : [{ t, constrained: false }],
  );
  let best: { attempt: RewrittenAttempt; score: number; attempts: number; target: Target } | null = null;
  // Each target's last failure: the client gets the one the shared precedence picks (final-outcome.ts).
  const failures = new Map<Target, TargetFailure>();
  let attempts = 0;
  const discard = (a: RewrittenAttempt) => {
    a.events.cancel();
    opts.onDiscard?.(a.buffered ?? []);
  };
  for (const step of steps) {
    attempts++;
    // A streamed best answer kept open holds its slot on its server: read it whole before asking that
    // server again, or the retry would wait in the admission line behind our own answer.
    if (best && opts.stream && best.target === step.t) best.attempt = await bufferAll(best.attempt);
    let attempt: RewrittenAttempt;
    try {
      attempt = await opts.start(step.t, step.constrained);
    } catch (e) {
      const err = e instanceof ProxyError ? e : new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: String(e) });
      failures.set(step.t, { target: step.t.name, error: err, ...(step.t.kind === "browser" && step.t.implicit ? { implicit: true } : {}) });
      if (!err.retryable) {
        err.attempts = attempts;
        err.outcomes = targetOutcomes([...failures.values()]);
        throw err;
      }
      continue;
    }
    if (opts.stream && attempt.first.type !== "toolCall") {
      // Text already flows to the client: deliver, and flag at the end if a call scores low.
      if (best) discard(best.attempt);
      return { attempt, attempts, belowMinScore: false };
    }
    const buffered = opts.stream ? await bufferUntilFirstCallScored(attempt) : await bufferAll(attempt);
    const score = lowestScore(buffered.reports());
    if (score >= opts.minScore) {
      if (best) discard(best.attempt);
      return { attempt: buffered, attempts, belowMinScore: false };
    }
    if (!best || score > best.score) {
      if (best) discard(best.attempt);
      best = { attempt: buffered, score, attempts, target: step.t };
    } else {
      discard(buffered);
    }
  }
  if (best) return { attempt: best.attempt, attempts, belowMinScore: true };
  const err = finalOutcome([...failures.values()])?.error ?? new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, message: "No target is available for this model." });
  err.attempts = attempts;
  err.outcomes = targetOutcomes([...failures.values()]);
  throw err;
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
