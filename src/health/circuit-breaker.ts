/**
 * A per-upstream circuit breaker as a pure state machine. Closed: traffic flows and consecutive
 * failures are counted. Open: after `failureThreshold` failures (or an upstream's own Retry-After),
 * traffic stays away until `until`. Half-open: the cooldown passed (or a probe of `/health` answered),
 * so traffic may try again; a success closes the circuit, a failure opens it with twice the cooldown.
 */
export type CircuitState = "closed" | "open" | "half-open";

export interface Circuit {
  state: CircuitState;
  failures: number;
  /** While open: when traffic may try again. */
  until: number;
  /** The cooldown of the last opening (doubles on each failed half-open try). */
  cooldownMs: number;
}

export interface BreakerPolicy {
  failureThreshold: number;
  cooldownMs: number;
  maxCooldownMs: number;
}

export const CLOSED: Circuit = { state: "closed", failures: 0, until: 0, cooldownMs: 0 };

/** The state as of `now`: an open circuit whose cooldown has passed is half-open. */
export function circuitState(c: Circuit, now: number): CircuitState {
  return c.state === "open" && now >= c.until ? "half-open" : c.state;
}

export function recordSuccess(_c: Circuit): Circuit {
  return CLOSED;
}

/** A failure; `retryAfterMs` is the upstream's own request to stay away (honoured as a cooldown). */
export function recordFailure(c: Circuit, now: number, policy: BreakerPolicy, retryAfterMs?: number): Circuit {
  const state = circuitState(c, now);
  if (state === "half-open") {
    const cooldownMs = Math.min(policy.maxCooldownMs, Math.max(policy.cooldownMs, c.cooldownMs * 2));
    return { state: "open", failures: c.failures + 1, until: now + Math.max(cooldownMs, retryAfterMs ?? 0), cooldownMs };
  }
  if (state === "open") return { ...c, failures: c.failures + 1, until: Math.max(c.until, now + (retryAfterMs ?? 0)) };
  const failures = c.failures + 1;
  if (failures >= policy.failureThreshold) {
    return { state: "open", failures, until: now + Math.max(policy.cooldownMs, retryAfterMs ?? 0), cooldownMs: policy.cooldownMs };
  }
  if (retryAfterMs !== undefined && retryAfterMs > 0) return { state: "open", failures, until: now + retryAfterMs, cooldownMs: 0 };
  return { ...c, failures };
}

/** The result of a half-open probe (`/health`) run by the hub once an open circuit's cooldown passed. */
export function recordProbe(c: Circuit, now: number, ok: boolean, policy: BreakerPolicy): Circuit {
  if (circuitState(c, now) !== "half-open") return c;
  if (ok) return { ...c, state: "half-open", until: now };
  const cooldownMs = Math.min(policy.maxCooldownMs, Math.max(policy.cooldownMs, c.cooldownMs * 2));
  return { state: "open", failures: c.failures, until: now + cooldownMs, cooldownMs };
}

/**
 * The circuit after a health sample (`ready`: `/health` answered 200), and whether the server has
 * been seen down (or loading) since its circuit left closed. A server seen down and then ready has
 * restarted: its circuit closes at once, whatever cooldown its earlier failures earned (a pool's
 * servers restart all the time, and a backoff grown while one churned would keep a healthy server
 * out for minutes). One that answers `/health` all along while its requests fail keeps the
 * breaker's cooldown, and is probed only once it has passed (recordProbe).
 */
export function afterSample(c: Circuit, sawDown: boolean, ready: boolean, now: number, policy: BreakerPolicy): { circuit: Circuit; sawDown: boolean } {
  if (c.state === "closed") return { circuit: c, sawDown: false };
  if (!ready) return { circuit: recordProbe(c, now, false, policy), sawDown: true };
  if (sawDown) return { circuit: CLOSED, sawDown: false };
  return { circuit: recordProbe(c, now, true, policy), sawDown: false };
}

/** For the operator view: 0 closed, 1 half-open, 2 open. */
export function circuitGauge(state: CircuitState): number {
  return state === "closed" ? 0 : state === "half-open" ? 1 : 2;
}
