// The /metrics page: traffic, upstream health and browser sessions in Prometheus text format.
import { circuitGauge, type CircuitState } from "./circuit-breaker.ts";
import { LATENCY_BUCKETS_MS, type Histogram, type TrafficMetrics } from "./traffic-metrics.ts";
import type { UpstreamHealth } from "./upstream-health.ts";

export interface OperatorStatus {
  traffic: TrafficMetrics;
  upstreams: Array<{ url: string; health: UpstreamHealth; circuit: CircuitState; usedAt?: number }>;
  sessions: Array<{ sessionId: string; models: string[]; running: number; queued: number }>;
}

const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

/** The operator's view in Prometheus text exposition format (version 0.0.4). */
export function renderMetrics(s: OperatorStatus): string {
  const out: string[] = [];
  const family = (name: string, type: string, help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  const line = (name: string, labels: Record<string, string>, value: number) => {
    const l = Object.entries(labels).map(([k, v]) => `${k}="${esc(v)}"`).join(",");
    out.push(`${name}${l ? `{${l}}` : ""} ${value}`);
  };
  const targets = Object.entries(s.traffic.targets);

  family("switchyard_requests_total", "counter", "Requests by the target that served them (none: no target) and outcome code (ok or the error code).");
  for (const [target, t] of targets) for (const [code, n] of Object.entries(t.outcomes)) line("switchyard_requests_total", { target, code }, n);
  family("switchyard_errors_total", "counter", "Requests that ended in an error, by target and code.");
  for (const [target, t] of targets) for (const [code, n] of Object.entries(t.outcomes)) if (code !== "ok") line("switchyard_errors_total", { target, code }, n);
  family("switchyard_tokens_total", "counter", "Tokens reported by upstreams, by target and kind (prompt, completion).");
  for (const [target, t] of targets) {
    line("switchyard_tokens_total", { target, kind: "prompt" }, t.promptTokens);
    line("switchyard_tokens_total", { target, kind: "completion" }, t.completionTokens);
  }
  const histogram = (name: string, help: string, pick: (t: TrafficMetrics["targets"][string]) => Histogram) => {
    family(name, "histogram", help);
    for (const [target, t] of targets) {
      const h = pick(t);
      LATENCY_BUCKETS_MS.forEach((le, i) => line(`${name}_bucket`, { target, le: String(le / 1000) }, h.buckets[i]!));
      line(`${name}_bucket`, { target, le: "+Inf" }, h.count);
      line(`${name}_sum`, { target }, h.sum / 1000);
      line(`${name}_count`, { target }, h.count);
    }
  };
  histogram("switchyard_first_event_seconds", "Time from the request to the upstream's first event (failover included).", (t) => t.firstEvent);
  histogram("switchyard_request_seconds", "Time from the request to the end of its answer.", (t) => t.total);

  family("switchyard_upstream_circuit_state", "gauge", "Circuit breaker per llama-server: 0 closed, 1 half-open, 2 open.");
  for (const u of s.upstreams) line("switchyard_upstream_circuit_state", { upstream: u.url }, circuitGauge(u.circuit));
  family("switchyard_upstream_up", "gauge", "Last /health sample: 1 ready, 0 otherwise (loading, down or not sampled yet).");
  for (const u of s.upstreams) line("switchyard_upstream_up", { upstream: u.url, state: u.health.state }, u.health.state === "ready" ? 1 : 0);
  family("switchyard_upstream_slots", "gauge", "Slots per llama-server from /slots, by state (busy, total).");
  for (const u of s.upstreams) {
    if (u.health.slotsTotal === undefined) continue;
    line("switchyard_upstream_slots", { upstream: u.url, state: "busy" }, u.health.slotsBusy ?? 0);
    line("switchyard_upstream_slots", { upstream: u.url, state: "total" }, u.health.slotsTotal);
  }
  family("switchyard_browser_sessions", "gauge", "Connected browser sessions.");
  line("switchyard_browser_sessions", {}, s.sessions.length);
  family("switchyard_browser_requests", "gauge", "Relayed requests in browser sessions, by state (running, queued).");
  line("switchyard_browser_requests", { state: "running" }, s.sessions.reduce((a, x) => a + x.running, 0));
  line("switchyard_browser_requests", { state: "queued" }, s.sessions.reduce((a, x) => a + x.queued, 0));
  return out.join("\n") + "\n";
}
