import { describe, expect, it } from "vitest";
import { statusBody, UNCONFIGURED_SHOWN_MS } from "../../../src/health/status-body.ts";
import { countOutcome, pruneTraffic, TRAFFIC_KEPT_MS, type TrafficMetrics } from "../../../src/health/traffic-metrics.ts";
import { CLOSED } from "../../../src/health/circuit-breaker.ts";

// The status page's Targets and Upstreams tables (issue 31): what the configuration names comes
// first, with or without traffic; what it no longer names shows for a day after its last request,
// and its totals leave the hub after a week.

const NOW = 10 * 24 * 3600_000;
const day = 24 * 3600_000;

function traffic(): TrafficMetrics {
  const m: TrafficMetrics = { since: 0, targets: {} };
  countOutcome(m, { target: "llama:old-box:8080", code: "upstream_unreachable", totalMs: 10 }, NOW - 3 * day);
  countOutcome(m, { target: "llama:recent-gone:8080", code: "ok", totalMs: 10 }, NOW - 60_000);
  countOutcome(m, { target: "llama:gpu-2:8080", code: "ok", totalMs: 10 }, NOW - 1000);
  countOutcome(m, { target: "browser:qwen", code: "ok", totalMs: 10 }, NOW - 1000);
  // Kept before totals were dated (an older deployment's): shown only if configured.
  m.targets["llama:undated:8080"] = { outcomes: { ok: 3 }, promptTokens: 0, completionTokens: 0, firstEvent: { buckets: [], sum: 0, count: 0 }, total: { buckets: [], sum: 0, count: 0 } };
  return m;
}

const upstream = (url: string, usedAt: number) => ({ url, health: { state: "ready" as const, circuit: CLOSED, checkedAt: usedAt }, circuit: "closed" as const, usedAt });

describe("status body", () => {
  it("configured targets first in the configuration's order (with or without traffic), then sessions, then recent others; old ones left out", () => {
    const s = statusBody(
      { traffic: traffic(), upstreams: [upstream("http://old-box:8080", NOW - 3 * day), upstream("http://gpu-2:8080", NOW - 1000), upstream("http://gpu-1:8080", NOW - 500)], sessions: [{ sessionId: "s1", models: ["qwen"], running: 0, queued: 0 }] },
      NOW,
      { targets: ["llama:gpu-1:8080", "llama:gpu-2:8080"], upstreams: ["http://gpu-1:8080", "http://gpu-2:8080"] },
    );
    expect(s.targets.map((t) => [t.target, t.configured, t.requests])).toEqual([
      ["llama:gpu-1:8080", true, 0],
      ["llama:gpu-2:8080", true, 1],
      ["browser:qwen", true, 1],
      ["llama:recent-gone:8080", false, 1],
    ]);
    expect(s.upstreams.map((u) => [u.url, u.configured])).toEqual([
      ["http://gpu-2:8080", true],
      ["http://gpu-1:8080", true],
    ]);
  });

  it("an unconfigured target shows until a day after its last request", () => {
    const m = traffic();
    const at = (ms: number) => statusBody({ traffic: m, upstreams: [], sessions: [] }, ms).targets.map((t) => t.target);
    expect(at(NOW - 60_000 + UNCONFIGURED_SHOWN_MS)).toContain("llama:recent-gone:8080");
    expect(at(NOW - 60_000 + UNCONFIGURED_SHOWN_MS + 1)).not.toContain("llama:recent-gone:8080");
  });
});

describe("traffic totals", () => {
  it("a target's totals are dropped a week after its last request; undated ones at once", () => {
    const m = traffic();
    expect(pruneTraffic(m, NOW)).toBe(true);
    expect(Object.keys(m.targets).sort()).toEqual(["browser:qwen", "llama:gpu-2:8080", "llama:old-box:8080", "llama:recent-gone:8080"]);
    expect(pruneTraffic(m, NOW - 3 * day + TRAFFIC_KEPT_MS)).toBe(false);
    expect(pruneTraffic(m, NOW - 3 * day + TRAFFIC_KEPT_MS + 1)).toBe(true);
    expect(Object.keys(m.targets)).not.toContain("llama:old-box:8080");
  });
});
