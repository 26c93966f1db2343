// What a pass over a model's targets that failed everywhere is worth waiting for in the admission
// line: a target that was there but full, or one coming back (loading, or restarting: ready moments
// ago); anything else is answered at once (pure, given the health snapshot).
import type { HealthSnapshot } from "../../health/upstream-health.ts";
import type { FailureKind } from "../../health/classify-failure.ts";
import { capabilitiesOf } from "../../upstreams/registry/adapters.ts";
import type { TargetFailure } from "./final-outcome.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";

/** A server that cannot answer now but may in a moment: dead, restarting, loading its model. */
const DOWN_KINDS: ReadonlySet<FailureKind> = new Set(["unreachable", "timeout", "loading", "broken"]);

/**
 * What a pass that failed everywhere is worth waiting for: "capacity" when a target was there but
 * full (refused for capacity by the admission gate or by the server), "comeback" when every target
 * was down (dead, restarting, loading) and one of them is coming back (see comingBack), else nothing
 * (no target serves the model, every one is gone for good, or the request was refused).
 */
export function waitFor(failed: Array<[Target, TargetFailure]>, kinds: ReadonlyMap<Target, FailureKind>, snapshot: HealthSnapshot, now: number, maxRetryAfterMs = Infinity): "capacity" | "comeback" | null {
  // A request refused as it is (a client mistake) is answered at once, whoever else was full.
  if (failed.length === 0 || failed.some(([t]) => kinds.get(t) === "client")) return null;
  if (failed.some(([, f]) => f.error.busy === true)) return "capacity";
  // A target refused without an attempt (the gate) has no kind: it was full, seen above.
  const down = failed.every(([t]) => DOWN_KINDS.has(kinds.get(t) ?? "client"));
  if (!down) return null;
  return failed.some(([t, f]) => comingBack(t, kinds.get(t), snapshot, now, f.error.retryAfter, maxRetryAfterMs)) ? "comeback" : null;
}

/**
 * A server that was ready this recently and is down now is restarting (a crash, an OOM kill, a
 * deploy): worth waiting for. One down for longer, or never seen ready (a wrong address), is gone.
 */
export const RESTARTING_MS = 5 * 60_000;

/**
 * A target that failed as down but may answer in a moment: loading its model (its answer, or the
 * health snapshot), or one whose process is gone (the connection refused or reset) that was ready
 * within RESTARTING_MS (a snapshot taken before it died says ready, with that sample's `readyAt`).
 * A server that timed out is not waited for (it is there, and slow: asking again would add to its
 * load), nor a browser session or a target without health. A target without health that says it is
 * loading (a browser session whose page said the model is not loaded) says itself when it is asked
 * again, its `Retry-After` (`retryAfterS`, the hub's bench): one later than `maxRetryAfterMs`
 * (retries.maxRetryAfterMs) is not waited for, so a page that keeps saying so is asked a few times
 * per waiting request, not until queue.maxWaitMs runs out.
 */
export function comingBack(t: Target, kind: FailureKind | undefined, snapshot: HealthSnapshot, now: number, retryAfterS?: number, maxRetryAfterMs = Infinity): boolean {
  const server = capabilitiesOf(t).server;
  if (kind === "loading") return server != null || (retryAfterS ?? 0) * 1000 <= maxRetryAfterMs;
  const h = server != null ? snapshot.upstreams[server.key] : undefined;
  if (!h) return false;
  if (h.state === "loading") return true;
  return kind === "unreachable" && h.readyAt !== undefined && now - h.readyAt < RESTARTING_MS;
}
