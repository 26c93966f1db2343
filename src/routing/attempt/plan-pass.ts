// A pass's order (docs/architecture.md, "Placement"): the request's targets by balance
// (placement/order-targets.ts) and by context fit (placement/context-check.ts), those whose context
// cannot hold the prompt left out, and those placement put back for their health or a context that
// holds only the prompt. The attempt loop (try-targets.ts) tries a pass in this order; the shared
// admission line grants by it (admission/pool-grants.ts).
import { balanceOf } from "../../config/config.ts";
import type { ProxyError } from "../../errors/proxy-error.ts";
import type { HealthRecorder } from "../../health/health-client.ts";
import type { HealthSnapshot } from "../../health/upstream-health.ts";
import type { NamedTarget as Target } from "../../upstreams/adapter.ts";
import type { PromptSize } from "../../upstreams/context-fit.ts";
import type { IsolateState } from "../isolate/isolate-state.ts";
import { byContext } from "../placement/context-check.ts";
import { orderTargets, putBack } from "../placement/order-targets.ts";
import type { PoolEstimate } from "../placement/rank-pool.ts";
import type { PlacementRequest } from "../placement/rank-servers.ts";
import type { TryOptions } from "./try-targets.ts";

/** What ordering a pass reads of the request. */
export type PlanOptions = Pick<TryOptions, "config" | "model" | "placement" | "size" | "serverCounts">;

/** A pass's order: the targets by balance and context fit, and those it cannot hold left out. */
export interface PassPlan {
  snapshot: HealthSnapshot | undefined;
  now: number;
  placement: PlacementRequest | null;
  estimates: Map<Target, PoolEstimate>;
  size: PromptSize | null;
  ordered: Target[];
  tooLong: Array<{ target: Target; error: ProxyError }>;
  /** The targets that hold the prompt but not its max_tokens (context-check.ts), at the end of `ordered`. */
  promptOnly: Target[];
  balance: "ordered" | "least-busy";
  /**
   * The conversation's home, first in `ordered`, and until when the request may wait in line for a
   * slot there rather than move (placement/rank-servers.ts holdMs): null when placement saw no reason.
   */
  hold: { target: Target; until: number } | null;
}

/** Orders one pass (placement/order-targets.ts, context-check.ts). */
export async function planPass(targets: Target[], opts: PlanOptions, isolate: IsolateState, health: HealthRecorder): Promise<PassPlan> {
  // One target has no order to choose and no failure to weigh against another: no snapshot needed.
  const snapshot = targets.length > 1 ? health.snapshot() : undefined;
  const now = Date.now();
  const balance = balanceOf(opts.config, opts.model);
  const placement = balance === "least-busy" ? (opts.placement?.() ?? null) : null;
  const estimates = new Map<Target, PoolEstimate>();
  let hold: PassPlan["hold"] = null;
  const onHold = (target: Target, ms: number) => (hold = { target, until: now + ms });
  const byBalance = snapshot ? orderTargets(targets, { balance, snapshot, now, placement, ledger: isolate.ledger, pool: isolate.pool, model: opts.model, onPool: (t, e) => estimates.set(t, e), onHold }) : targets;
  const size = snapshot ? (opts.size?.() ?? null) : null;
  const { ordered, promptOnly, tooLong } = size && snapshot ? await byContext(byBalance, size, snapshot, isolate.ledger, opts.serverCounts) : { ordered: byBalance, promptOnly: [], tooLong: [] };
  // A home the context check moved back (its window cannot hold the answer) is no reason to wait.
  const held = hold as PassPlan["hold"];
  return { snapshot, now, placement, estimates, size, ordered, tooLong, promptOnly, balance, hold: held && ordered[0] === held.target ? held : null };
}

/**
 * The targets of a pass placement put back: for their health (placement/order-targets.ts putBack) or
 * for a context that holds only the prompt. Only the shared admission line asks (it grants by them).
 */
export function demotedIn(plan: PassPlan): Target[] {
  const { snapshot, promptOnly, balance, now } = plan;
  return snapshot ? plan.ordered.filter((t) => promptOnly.includes(t) || putBack(t, snapshot, balance, now)) : [];
}
