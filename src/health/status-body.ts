// What `GET /v1/admin/status` answers (the status page reads it: worker/status.ts imports this type):
// each target's traffic with its totals and means, the upstreams and the browser sessions.

import type { OperatorStatus } from "./render-metrics.ts";
import type { TargetTraffic, TrafficMetrics } from "./traffic-metrics.ts";

export interface TargetTotals extends Pick<TargetTraffic, "outcomes" | "promptTokens" | "completionTokens"> {
  target: string;
  /** Declared in the configuration (or zero config's llama-server), or a browser session serving now. */
  configured: boolean;
  /** When its last request was counted (ms), when known. */
  lastAt: number | null;
  requests: number;
  errors: number;
  meanFirstEventMs: number | null;
  meanRequestMs: number | null;
}

export interface StatusBody {
  at: number;
  since: TrafficMetrics["since"];
  targets: TargetTotals[];
  upstreams: Array<OperatorStatus["upstreams"][number] & { configured: boolean }>;
  sessions: OperatorStatus["sessions"];
}

/** What the configuration names: its targets (client-facing names) and its servers (upstream keys). */
export interface Configured {
  targets: readonly string[];
  upstreams: readonly string[];
}

/** A target or server the configuration no longer names is shown while it had traffic this recently. */
export const UNCONFIGURED_SHOWN_MS = 24 * 3600_000;

/**
 * The status page's data: the configured targets first (in the configuration's order, with or without
 * traffic), the browser sessions' targets, then the others with traffic in the last day, newest
 * first; older ones are left out (their totals age out of the hub after a week). The same for servers.
 */
export function statusBody(s: OperatorStatus, at: number, configured: Configured = { targets: [], upstreams: [] }): StatusBody {
  const sessionTargets = new Set(s.sessions.flatMap((x) => x.models.map((m) => `browser:${m}`)));
  const named = new Set([...configured.targets, ...sessionTargets]);
  const totals = (target: string, t: TargetTraffic | undefined): TargetTotals => ({
    target,
    configured: named.has(target),
    lastAt: t?.lastAt ?? null,
    requests: t ? Object.values(t.outcomes).reduce((a, b) => a + b, 0) : 0,
    errors: t ? Object.entries(t.outcomes).reduce((a, [code, n]) => a + (code === "ok" ? 0 : n), 0) : 0,
    outcomes: t?.outcomes ?? {},
    promptTokens: t?.promptTokens ?? 0,
    completionTokens: t?.completionTokens ?? 0,
    meanFirstEventMs: t?.firstEvent.count ? Math.round(t.firstEvent.sum / t.firstEvent.count) : null,
    meanRequestMs: t?.total.count ? Math.round(t.total.sum / t.total.count) : null,
  });
  const traffic = s.traffic.targets;
  const own = (k: string) => (Object.hasOwn(traffic, k) ? traffic[k] : undefined);
  const first = [...new Set([...configured.targets, ...[...sessionTargets].filter((t) => own(t))])].map((t) => totals(t, own(t)));
  const others = Object.entries(traffic)
    .filter(([target, t]) => !named.has(target) && t.lastAt !== undefined && at - t.lastAt <= UNCONFIGURED_SHOWN_MS)
    .sort(([, a], [, b]) => (b.lastAt ?? 0) - (a.lastAt ?? 0))
    .map(([target, t]) => totals(target, t));
  const servers = new Set(configured.upstreams);
  const upstreams = [
    ...s.upstreams.filter((u) => servers.has(u.url)).map((u) => ({ ...u, configured: true })),
    ...s.upstreams.filter((u) => !servers.has(u.url) && u.usedAt !== undefined && at - u.usedAt <= UNCONFIGURED_SHOWN_MS).map((u) => ({ ...u, configured: false })),
  ];
  return { at, since: s.traffic.since, targets: [...first, ...others], upstreams, sessions: s.sessions };
}
