// How an isolate reaches the AdmissionHub of a pool (docs/architecture.md, "Across isolates"): the
// instance for a set of servers, whether the deployment shares admission, a call raced against its
// time, and the isolate's tally of what its shared admissions came to.
import { durableNamespace, type EnvVars } from "../../config/env-vars.ts";
import type { AdmissionHub } from "./admission-hub.ts";

/** The hub must answer an ask within this long, or the request is admitted by its isolate alone. */
export const ASK_TIMEOUT_MS = 1000;

/**
 * What an isolate's shared admissions came to (/metrics): started on a credit (no call before the
 * start), granted at once, queued at the hub, refused after the wait, fallen back to the isolate's own
 * line. Its isolate state (src/routing/isolate/isolate-state.ts) holds its one.
 */
export interface SharedCounts {
  credited: number;
  granted: number;
  queued: number;
  fallback: number;
  refused: number;
}

/** A tally at zero. */
export function newSharedCounts(): SharedCounts {
  return { credited: 0, granted: 0, queued: 0, fallback: 0, refused: 0 };
}

/** The name of a pool's hub instance: one per set of servers (a model's plan), so pools shard over instances. */
export function poolName(servers: readonly string[]): string {
  return `pool:${[...servers].sort().join(" ")}`;
}

/** The hub of a pool. */
export function admissionHub(env: EnvVars, servers: readonly string[]): DurableObjectStub<AdmissionHub> {
  return durableNamespace<AdmissionHub>(env, "ADMISSION_HUB").getByName(poolName(servers));
}

/** Whether this deployment shares admission: the binding is there (wrangler.toml) and `queue.shared` is not off. */
export function sharesAdmission(env: EnvVars, shared: boolean): boolean {
  return shared && env.ADMISSION_HUB !== undefined;
}

/** Races `p` against `ms`: undefined when the time ran out first. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const out = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([p, out]);
  } finally {
    clearTimeout(timer);
  }
}
