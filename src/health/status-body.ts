// What `GET /v1/admin/status` answers (the status page reads it: worker/status.ts imports this type):
// each target's traffic with its totals and means, the upstreams and the browser sessions.

import type { OperatorStatus } from "./render-metrics.ts";
import type { TargetTraffic, TrafficMetrics } from "./traffic-metrics.ts";

export interface TargetTotals extends Pick<TargetTraffic, "outcomes" | "promptTokens" | "completionTokens"> {
  target: string;
  requests: number;
  errors: number;
  meanFirstEventMs: number | null;
  meanRequestMs: number | null;
}

export interface StatusBody {
  at: number;
  since: TrafficMetrics["since"];
  targets: TargetTotals[];
  upstreams: OperatorStatus["upstreams"];
  sessions: OperatorStatus["sessions"];
}

export function statusBody(s: OperatorStatus, at: number): StatusBody {
  const targets = Object.entries(s.traffic.targets).map(([target, t]): TargetTotals => ({
    target,
    requests: Object.values(t.outcomes).reduce((a, b) => a + b, 0),
    errors: Object.entries(t.outcomes).reduce((a, [code, n]) => a + (code === "ok" ? 0 : n), 0),
    outcomes: t.outcomes,
    promptTokens: t.promptTokens,
    completionTokens: t.completionTokens,
    meanFirstEventMs: t.firstEvent.count ? Math.round(t.firstEvent.sum / t.firstEvent.count) : null,
    meanRequestMs: t.total.count ? Math.round(t.total.sum / t.total.count) : null,
  }));
  return { at, since: s.traffic.since, targets, upstreams: s.upstreams, sessions: s.sessions };
}
