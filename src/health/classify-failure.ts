// What a failed attempt means for routing: retry the same target, move on, or give up; and whether
// it counts against the upstream's health.
import type { ProxyError } from "../errors/proxy-error.ts";

/**
 * What a failed attempt says about the request and the upstream:
 * - client: the request is wrong; no target would take it (never retried);
 * - gone: the client left;
 * - unreachable / timeout / loading: this upstream cannot serve now; try the next one;
 * - busy: no free slot (503 or 429); worth the same target again after a short Retry-After;
 * - broken: a 5xx or a broken stream; worth one more try on the same target after a backoff;
 * - misconfigured: the upstream refused Switchyard itself (401/403 key, 404 URL, router mode without
 *   the target's model: a retryable 400); move on;
 * - unavailable: not a health signal (a browser target without a session, a missing secret);
 * - too_long: the prompt does not fit this target's context; a larger one may take it (move on,
 *   not a health signal);
 * - deadline: the request's own `timeouts.totalMs` ran out while the upstream was keeping to its
 *   first-token and idle timeouts (a long answer, not a slow server): another target gets its own
 *   time (move on), but it says nothing about this one's health.
 */
export type FailureKind = "client" | "gone" | "unreachable" | "timeout" | "loading" | "busy" | "broken" | "misconfigured" | "unavailable" | "too_long" | "deadline";

/** What `err` means for routing; `upstreamStatus`, the upstream's own HTTP status behind it (`err.upstreamStatus`), tells a misconfiguration. */
export function classifyFailure(err: ProxyError, upstreamStatus?: number): FailureKind {
  if (err.status === 499 || err.code === "client_closed_request") return "gone";
  if (err.ownDeadline) return "deadline";
  if (err.code === "context_length_exceeded") return err.retryable ? "too_long" : "client";
  if (!err.retryable) return "client";
  if (upstreamStatus === 400 || upstreamStatus === 401 || upstreamStatus === 403 || upstreamStatus === 404) return "misconfigured";
  switch (err.code) {
    case "upstream_unreachable":
      return "unreachable";
    case "upstream_timeout":
      return "timeout";
    case "model_loading":
      return "loading";
    case "no_capacity":
      return "busy";
    case "upstream_error":
      return "broken";
    default:
      return "unavailable";
  }
}

/** Whether the same target deserves another try (bounded by retries.perTarget). */
export function retriesSameTarget(kind: FailureKind): boolean {
  return kind === "busy" || kind === "broken";
}

/**
 * Whether the failure counts against the upstream's health (its circuit breaker): only what the
 * upstream did. A client mistake, the client leaving, the request's own deadline, a busy server and a
 * target that cannot take this request are not the server's fault, and one key sending many of them
 * must not move every other key's traffic off a healthy server.
 */
export function countsAgainstUpstream(kind: FailureKind): boolean {
  return kind === "unreachable" || kind === "timeout" || kind === "loading" || kind === "broken" || kind === "misconfigured";
}
