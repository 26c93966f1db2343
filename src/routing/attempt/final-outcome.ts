// Which failure the client is told when no target served its request, the same whatever order the
// targets were tried in; and what each target did, for the operator.
import type { ProxyError, TargetOutcome } from "../../errors/proxy-error.ts";
import { parseContextLengthMessage } from "../../errors/context-length.ts";

/** One target's last failure in a request that no target served. */
export interface TargetFailure {
  /** The client-facing target name (`targetName()`). */
  target: string;
  error: ProxyError;
  /** Not an attempt: the target cannot take this kind of request at all (`TryOptions.skips`). */
  skipped?: boolean;
  /** Its circuit was open when the request was ordered (so it was tried last). */
  circuitOpen?: boolean;
  /** Added by zero config rather than declared: the implicit browser fallback. */
  implicit?: boolean;
}

/**
 * The classes of failure, the client's answer first. The class alone decides between two failures,
 * so the answer never depends on the order the targets were tried in or on their circuits:
 * - request: the request itself was refused (a client mistake that stopped the loop, or a target's
 *   4xx such as a browser session's `413 request_too_large`): changing the request is the fix;
 * - capacity: `503 no_capacity` / `model_loading`: come back after `Retry-After`;
 * - timeout, error, other, unreachable: how far the attempt got (a timeout means the server took the
 *   request; an `upstream_error` that it answered wrongly; `upstream_unreachable` that nothing
 *   answered);
 * - absent: a target that was never a real candidate (skipped, or the implicit browser fallback with
 *   no session): the answer only when nothing else is known.
 */
export type FailureClass = "request" | "capacity" | "timeout" | "error" | "other" | "unreachable" | "absent";

const CLASS_ORDER: readonly FailureClass[] = ["request", "capacity", "timeout", "error", "other", "unreachable", "absent"];

export function failureClass(f: TargetFailure): FailureClass {
  const { error: e } = f;
  if (f.skipped) return "absent";
  if (f.implicit && e.code === "no_capacity") return "absent";
  if (!e.retryable || (e.status >= 400 && e.status < 500 && e.status !== 499)) return "request";
  switch (e.code) {
    case "no_capacity":
    case "model_loading":
      return "capacity";
    case "upstream_timeout":
      return "timeout";
    case "upstream_error":
      return "error";
    case "upstream_unreachable":
      return "unreachable";
    default:
      return "other";
  }
}

/**
 * Negative when `a` is the better answer for the client. Within a class: a live target before one
 * whose circuit was open, a target tried before one skipped; then a failure no target would get past (not retryable) before one only
 * this target had, `context_length_exceeded` first (clients compact on it) and of those the one
 * naming the largest window (the most the model can hold anywhere); the smallest
 * `Retry-After`, `model_loading` before `no_capacity`; then status and code, so the order is total.
 */
export function compareFailures(a: TargetFailure, b: TargetFailure): number {
  return (
    CLASS_ORDER.indexOf(failureClass(a)) - CLASS_ORDER.indexOf(failureClass(b)) ||
    Number(Boolean(a.circuitOpen)) - Number(Boolean(b.circuitOpen)) ||
    Number(Boolean(a.skipped)) - Number(Boolean(b.skipped)) ||
    Number(a.error.retryable) - Number(b.error.retryable) ||
    Number(a.error.code !== "context_length_exceeded") - Number(b.error.code !== "context_length_exceeded") ||
    contextWindowOf(b) - contextWindowOf(a) ||
    (a.error.retryAfter ?? Infinity) - (b.error.retryAfter ?? Infinity) ||
    Number(a.error.code !== "model_loading") - Number(b.error.code !== "model_loading") ||
    a.error.status - b.error.status ||
    (a.error.code < b.error.code ? -1 : a.error.code > b.error.code ? 1 : 0)
  );
}

/** The context window a `context_length_exceeded` failure names (0 when it names none). */
function contextWindowOf(f: TargetFailure): number {
  if (f.error.code !== "context_length_exceeded") return 0;
  return parseContextLengthMessage(f.error.message)?.contextTokens ?? 0;
}

/**
 * The failure the client gets: the best by `compareFailures`; between equals, the first in the list
 * (the one tried first). `undefined` for no failures.
 */
export function finalOutcome(failures: readonly TargetFailure[]): TargetFailure | undefined {
  let best: TargetFailure | undefined;
  for (const f of failures) if (!best || compareFailures(f, best) < 0) best = f;
  return best;
}

/** What the operator sees of each target (`x-switchyard-outcomes`, `x_switchyard.outcomes`). */
export function targetOutcomes(failures: readonly TargetFailure[]): TargetOutcome[] {
  return failures.map((f) => ({ target: f.target, code: f.error.code, status: f.error.status, ...(f.skipped ? { skipped: true as const } : {}) }));
}
