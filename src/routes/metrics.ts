// GET /metrics, Prometheus text for the operator, and the gathering of health and sessions it
// shares with the status page.
import type { Context } from "hono";
import { batchesInProgress, batchMetrics } from "../batch/batches-in-progress.ts";
import type { AppEnv } from "../auth/app-env.ts";
import { requireAdmin } from "../auth/principal.ts";
import { healthHub } from "../health/health-client.ts";
import { renderMetrics, type OperatorStatus } from "../health/render-metrics.ts";
import { EMPTY_SNAPSHOT } from "../health/upstream-health.ts";
import { sessionHub } from "../upstreams/browser/browser-upstream.ts";
import { isolateState } from "../routing/isolate/isolate-state.ts";

/** Everything the operator view shows: traffic totals and upstream health (HealthHub), sessions (SessionHub). */
export async function operatorStatus(env: Env): Promise<OperatorStatus> {
  const hub = healthHub(env);
  const [health, sessions] = await Promise.all([
    hub ? hub.status() : Promise.resolve({ traffic: { since: Date.now(), targets: {} }, upstreams: [], snapshot: EMPTY_SNAPSHOT }),
    sessionHub(env).sessions().catch(() => []),
  ]);
  return { traffic: health.traffic, upstreams: health.upstreams as OperatorStatus["upstreams"], sessions: sessions as OperatorStatus["sessions"] };
}

/** `GET /metrics`: Prometheus text, admin only (ADMIN_TOKEN or an admin key). */
export async function metrics(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const text = renderMetrics(await operatorStatus(c.env)) + sharedAdmissionMetrics() + batchMetrics(await batchesInProgress(c.env));
  return new Response(text, { headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8", "cache-control": "no-store" } });
}

/**
 * This isolate's shared admissions (docs/architecture.md, "Admission queue"): granted at once, queued
 * at the hub, refused after the wait, and fallen back to the isolate's own line because the hub did
 * not answer. Per isolate: each /metrics read counts the isolate that served it.
 */
function sharedAdmissionMetrics(): string {
  const lines = ["# HELP switchyard_admission_shared_total This isolate's requests admitted through the shared AdmissionHub, by outcome (fallback: the hub did not answer, the isolate's own line admitted it).", "# TYPE switchyard_admission_shared_total counter"];
  for (const [outcome, n] of Object.entries(isolateState().sharedCounts)) lines.push(`switchyard_admission_shared_total{outcome="${outcome}"} ${n}`);
  return lines.join("\n") + "\n";
}
