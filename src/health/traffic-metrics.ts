// The traffic totals behind /metrics: requests, tokens and latency histograms per target.
import type { RequestOutcome } from "./health-report.ts";

/** Latency histogram bounds in milliseconds (Prometheus `le`). */
export const LATENCY_BUCKETS_MS = [50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 120_000];

export interface Histogram {
  buckets: number[];
  sum: number;
  count: number;
}

export interface TargetTraffic {
  /** Requests by outcome code ("ok" or the error code). */
  outcomes: Record<string, number>;
  promptTokens: number;
  completionTokens: number;
  firstEvent: Histogram;
  total: Histogram;
  /** When its last request was counted (ms); absent in totals kept before it was recorded. */
  lastAt?: number;
}

export interface TrafficMetrics {
  since: number;
  targets: Record<string, TargetTraffic>;
}

export const emptyHistogram = (): Histogram => ({ buckets: LATENCY_BUCKETS_MS.map(() => 0), sum: 0, count: 0 });

export function observe(h: Histogram, ms: number): void {
  LATENCY_BUCKETS_MS.forEach((le, i) => {
    if (ms <= le) h.buckets[i]!++;
  });
  h.sum += ms;
  h.count++;
}

/** A target's totals are dropped after this long without a request: configurations change, and one long gone must not stay on the status page and /metrics for ever. */
export const TRAFFIC_KEPT_MS = 7 * 24 * 3600_000;

/** Adds one request's outcome to the totals (mutates `m`). */
export function countOutcome(m: TrafficMetrics, o: RequestOutcome, now = Date.now()): void {
  const t = (m.targets[o.target] ??= { outcomes: {}, promptTokens: 0, completionTokens: 0, firstEvent: emptyHistogram(), total: emptyHistogram() });
  t.lastAt = now;
  t.outcomes[o.code] = (t.outcomes[o.code] ?? 0) + 1;
  t.promptTokens += o.promptTokens ?? 0;
  t.completionTokens += o.completionTokens ?? 0;
  if (o.firstEventMs !== undefined) observe(t.firstEvent, o.firstEventMs);
  observe(t.total, o.totalMs);
}

/** Drops the totals of targets without a request for `keptMs` (or never dated); true when some were dropped (mutates `m`). */
export function pruneTraffic(m: TrafficMetrics, now: number, keptMs = TRAFFIC_KEPT_MS): boolean {
  let dropped = false;
  for (const [target, t] of Object.entries(m.targets)) {
    if (t.lastAt === undefined || now - t.lastAt > keptMs) {
      delete m.targets[target];
      dropped = true;
    }
  }
  return dropped;
}
