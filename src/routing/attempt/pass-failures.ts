// What one pass over a request's targets learned of them: each target's last failure (in the order
// first tried) and its kind, the attempts so far, and the error the pass ends with when no target
// served it: the failure that ranks first (final-outcome.ts), carrying the attempts and every
// target's outcome, and what it is worth waiting for in the admission line (worth-waiting.ts).
import { ProxyError } from "../../errors/proxy-error.ts";
import { circuitState } from "../../health/circuit-breaker.ts";
import type { FailureKind } from "../../health/classify-failure.ts";
import type { HealthRecorder } from "../../health/health-client.ts";
import type { HealthSnapshot } from "../../health/upstream-health.ts";
import { capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import { finalOutcome, targetOutcomes, type TargetFailure } from "./final-outcome.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";
import { waitFor } from "./worth-waiting.ts";

/** The request's tries across its passes: what a pass reads and leaves for the next (and for the request's outcome). */
export interface Tries {
  attempts: number;
  /** The target the request's outcome is reported under. */
  finishTarget: string;
  /** What the last pass that failed says is worth waiting for. */
  wait: "capacity" | "comeback" | null;
}

export class PassFailures {
  private readonly failures = new Map<Target, TargetFailure>();
  /** Each target's last failure kind, for what the pass's end says is worth waiting for. */
  private readonly kinds = new Map<Target, FailureKind>();
  /** Attempts count across the request's passes; `retries.maxAttempts` bounds each pass. */
  attempts: number;
  private readonly firstAttempt: number;
  private lastTarget: Target | undefined;

  constructor(
    private readonly tries: Tries,
    /** The snapshot the targets were ordered by (none for a single target). */
    private readonly snapshot: HealthSnapshot | undefined,
    private readonly now: number,
    private readonly health: HealthRecorder,
    private readonly maxRetryAfterMs: number,
  ) {
    this.attempts = tries.attempts;
    this.firstAttempt = this.attempts;
  }

  /** Attempts made in this pass. */
  get made(): number {
    return this.attempts - this.firstAttempt;
  }

  /** An attempt on `target` begins; the undoing, for one that turns out to skip it (TryOptions.skips). */
  begin(target: Target): () => void {
    const before = this.lastTarget;
    this.attempts++;
    this.lastTarget = target;
    return () => {
      this.attempts--;
      this.lastTarget = before;
    };
  }

  /** `target` failed with `error` (`kind` when an attempt classified it); `skipped`: not an attempt, it cannot take the request. */
  failed(target: Target, error: ProxyError, opts: { skipped?: boolean; kind?: FailureKind } = {}): void {
    if (opts.kind !== undefined) this.kinds.set(target, opts.kind);
    this.failures.set(target, {
      target: target.name,
      error,
      ...(opts.skipped ? { skipped: opts.skipped } : {}),
      ...(circuitOpen(target, this.snapshot, this.now) ? { circuitOpen: true } : {}),
      ...(target.implicit ? { implicit: true } : {}),
    });
  }

  /** The pass ends with `err` (`target`'s failure, when it is one): it carries the attempts and every target's outcome. */
  end(err: ProxyError, target?: Target): ProxyError {
    return this.endWith(err, target && this.failures.get(target));
  }

  /** Every target failed: the pass ends with the failure that ranks first, whatever the order and the circuits. */
  final(): ProxyError {
    const chosen = finalOutcome([...this.failures.values()]);
    return this.endWith(chosen?.error ?? new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, message: "No target is available for this model." }), chosen);
  }

  private endWith(err: ProxyError, from?: TargetFailure): ProxyError {
    const { tries } = this;
    tries.attempts = this.attempts;
    tries.wait = waitFor([...this.failures.entries()].filter(([, f]) => !f.skipped), this.kinds, this.snapshot ?? this.health.snapshot(), Date.now(), this.maxRetryAfterMs);
    err.attempts = this.attempts;
    err.outcomes = targetOutcomes([...this.failures.values()]);
    tries.finishTarget = from && !from.skipped ? from.target : (this.lastTarget?.name ?? tries.finishTarget);
    return err;
  }
}

/** Whether the target's circuit was open when the request was ordered (orderTargets put it last). */
function circuitOpen(target: Target, snapshot: HealthSnapshot | undefined, now: number): boolean {
  const server = capabilitiesOf(target).server;
  if (!server || !snapshot) return false;
  const h = snapshot.upstreams[server.key];
  return h !== undefined && circuitState(h.circuit, now) === "open";
}
