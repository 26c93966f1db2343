// One request's trace: its ids (the client's trace continued when it sent a `traceparent`) and the
// attempts routing reports, each a child span whose `traceparent` goes upstream with the attempt.
import { formatTraceParent, newSpanId, newTraceId, type TraceParent } from "./trace-context.ts";

/** One upstream attempt as a span: which server, when, and how it ended ("ok" or an error code). */
export interface AttemptSpan {
  spanId: string;
  /** The client-facing target name (`llama:host:port`). */
  target: string;
  /** The server's URL, when the target has one (browser targets do not). */
  url?: string;
  startedAt: number;
  endedAt?: number;
  outcome?: string;
}

/** What routing holds of a request's trace (the hook: RequestScope.trace, AttemptContext.traceparent). */
export interface AttemptTracer {
  /** An attempt on `target` starts: its span, and the `traceparent` its upstream request carries. */
  attemptStarted(target: string, url?: string): { traceparent: string; ended(outcome: string): void };
}

/**
 * The ids are made when first asked for (the trace's at the first attempt, our span's when the
 * spans are built, in the outbox's batch): a request's own path makes as few as it can.
 */
export class RequestTrace implements AttemptTracer {
  /** The client's span, when it sent a traceparent. */
  readonly parentSpanId: string | undefined;
  readonly sampled: boolean;
  /** The attempts routing reported (none until the hook is wired: spans are then derived from the answer). */
  readonly attempts: AttemptSpan[] = [];
  private trace: string | undefined;
  private span: string | undefined;

  constructor(parent: TraceParent | null) {
    this.trace = parent?.traceId;
    this.parentSpanId = parent?.spanId;
    this.sampled = parent?.sampled ?? true;
  }

  get traceId(): string {
    return (this.trace ??= newTraceId());
  }

  /** Our server span. */
  get spanId(): string {
    return (this.span ??= newSpanId());
  }

  attemptStarted(target: string, url?: string): { traceparent: string; ended(outcome: string): void } {
    const span: AttemptSpan = { spanId: newSpanId(), target, startedAt: Date.now(), ...(url ? { url } : {}) };
    this.attempts.push(span);
    return {
      traceparent: formatTraceParent(this.traceId, span.spanId, this.sampled),
      ended(outcome) {
        span.endedAt ??= Date.now();
        span.outcome ??= outcome;
      },
    };
  }
}
