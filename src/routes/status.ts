import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { requireAdmin } from "../auth/principal.ts";
import { operatorStatus } from "./metrics.ts";

/** `GET /v1/admin/status`: the status page's data (public/status.html polls it), admin only. */
export async function status(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const s = await operatorStatus(c.env);
  const totals = Object.entries(s.traffic.targets).map(([target, t]) => ({
    target,
    requests: Object.values(t.outcomes).reduce((a, b) => a + b, 0),
    errors: Object.entries(t.outcomes).reduce((a, [code, n]) => a + (code === "ok" ? 0 : n), 0),
    outcomes: t.outcomes,
    promptTokens: t.promptTokens,
    completionTokens: t.completionTokens,
    meanFirstEventMs: t.firstEvent.count ? Math.round(t.firstEvent.sum / t.firstEvent.count) : null,
    meanRequestMs: t.total.count ? Math.round(t.total.sum / t.total.count) : null,
  }));
  return c.json({ at: Date.now(), since: s.traffic.since, targets: totals, upstreams: s.upstreams, sessions: s.sessions }, 200, { "cache-control": "no-store" });
}
