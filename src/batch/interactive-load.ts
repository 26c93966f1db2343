// Whether interactive requests wait for a model, asked by the batch runner before it starts a line of
// it (batch-store.ts): with admission shared (queue.shared and the ADMISSION_HUB binding), the line of
// the model's pool at its AdmissionHub, which holds every isolate's waiters; otherwise, or when the
// hub does not answer in time or fails, this isolate's own line.
import type { Config } from "../config/config.ts";
import { admissionPlan, sharedServers } from "../routing/admission/admission-wait.ts";
import { admissionHub, ASK_TIMEOUT_MS, sharesAdmission } from "../routing/admission/hub-client.ts";
import { isolateState } from "../routing/isolate/isolate-state.ts";
import { planTargetsFor } from "../routing/plan-targets.ts";

/** Where the count can come from. */
export interface WaitingSources {
  /** The pool's AdmissionHub's count, or null when the model's admission is not shared. */
  hub: (() => Promise<number>) | null;
  /** This isolate's line's count. */
  local(): number;
}

/** How many interactive requests wait for the model, and whose line said so. */
export interface Waiting {
  waiting: number;
  from: "hub" | "local";
}

/**
 * The decision: the hub's count when the model's admission is shared and the hub answers within
 * `timeoutMs`; otherwise (not shared, a hub that fails or is slow) the local line's, so the runner
 * never waits on a hub that is down and still defers to this isolate's own waiters.
 */
export async function interactiveWaiting(sources: WaitingSources, timeoutMs: number): Promise<Waiting> {
  if (sources.hub) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
    try {
      const n = await Promise.race([sources.hub(), late]);
      if (typeof n === "number" && Number.isFinite(n) && n >= 0) return { waiting: n, from: "hub" };
    } catch {
      // The hub failed: this isolate's line decides, as a request's admission falls back to it.
    } finally {
      clearTimeout(timer);
    }
  }
  return { waiting: sources.local(), from: "local" };
}

/**
 * The sources for `model` in this deployment: its hub is the one a request for it with the
 * deployment's browser policy would take its turn from (the same plan: admission-wait.ts), and the
 * local line this isolate's.
 */
export function waitingSources(env: Env, config: Config, model: string): WaitingSources {
  const state = isolateState();
  const local = () => state.queue.interactiveWaiting(model);
  if (!sharesAdmission(env, config.queue.shared)) return { hub: null, local };
  let servers: string[] | null;
  try {
    servers = sharedServers(admissionPlan(planTargetsFor(config, model, undefined), model, state.pool));
  } catch {
    // A model no target serves: its lines are answered 404 by the pipeline, nobody waits for it.
    servers = null;
  }
  if (!servers) return { hub: null, local };
  const pool = servers;
  return { hub: async () => admissionHub(env, pool).interactiveWaiting(model), local };
}

/** Whether interactive requests wait for `model` now (the runner's check), within the hub's ask timeout. */
export function interactiveWaitingFor(env: Env, config: Config, model: string): Promise<Waiting> {
  return interactiveWaiting(waitingSources(env, config, model), ASK_TIMEOUT_MS);
}
