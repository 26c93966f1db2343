// The Durable Object that keeps upstream health for every isolate: what it tracks and tells them
// (snapshot, status), what they report (observe), and its alarm, which samples the upstreams in use
// (sample-upstream.ts) and keeps the traffic totals behind /metrics.
import { DurableObject } from "cloudflare:workers";
import { CLOSED, recordFailure, recordSuccess, circuitState, type BreakerPolicy } from "./circuit-breaker.ts";
import { countsAgainstUpstream } from "./classify-failure.ts";
import type { HealthReport, PlacementNews, UpstreamRef } from "./health-report.ts";
import { countOutcome, pruneTraffic, type TrafficMetrics } from "./traffic-metrics.ts";
import type { CircuitState } from "./circuit-breaker.ts";
import { upstreamKey, type HealthSnapshot, type UpstreamHealth } from "./upstream-health.ts";
import { PlacementNotes } from "./placement-notes.ts";
import { sampleUpstream, type Tracked } from "./sample-upstream.ts";

/**
 * A server found down or loading is sampled every `tickMs` (only `/health`, which a dead host
 * refuses at once) for its first `watchMs` down, and isolates are told to refresh their copy as
 * often: a restarted server rejoins within a fraction of a second instead of a sample period plus a
 * snapshot's life (about 2 s, more with a slow sample). After `watchMs` a box that stays dead costs
 * the normal cadence again.
 */
const RECOVERY = { tickMs: 250, watchMs: 300_000 };

const DEFAULT_POLICY = {
  circuit: { failureThreshold: 5, cooldownMs: 10_000, maxCooldownMs: 120_000 } as BreakerPolicy,
  health: { sampleMs: 1000, idleStopMs: 60_000 },
};

/**
 * Upstream health shared by every isolate (one instance, "health"). Requests never wait on it:
 * isolates read its snapshot in the background and send their passive signals (connection errors,
 * 5xx, timeouts) and outcomes with `waitUntil`. While there is traffic its alarm samples each
 * llama-server's `/health` and `/slots` (an OpenAI-compatible server's `GET /v1/models` only) and
 * probes open circuits whose cooldown has passed (half-open); a server seen down and then ready (it
 * restarted) has its circuit closed at once. It also keeps the traffic totals behind `/metrics`.
 */
export class HealthHub extends DurableObject<Env> {
  private readonly upstreams = new Map<string, Tracked>();
  private traffic: TrafficMetrics = { since: Date.now(), targets: {} };
  private policy = DEFAULT_POLICY;
  private lastTraffic = 0;
  private dirty = false;
  /** When the next alarm is due (0: none known), so a request does not cost a storage read. */
  private alarmAt = 0;
  private readonly notes = new PlacementNotes();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      const saved = await ctx.storage.get<TrafficMetrics>("traffic");
      if (saved) this.traffic = saved;
    });
  }

  /** The health of every upstream, and the placement notes after `since` (a `seq` this hub gave before). */
  snapshot(since?: number): HealthSnapshot & { placements: PlacementNews } {
    this.touch();
    const upstreams: Record<string, UpstreamHealth> = {};
    for (const [key, t] of this.upstreams) upstreams[key] = t.health;
    const now = Date.now();
    const watching = [...this.upstreams.values()].some((t) => this.recovering(t, now));
    return { at: now, upstreams, ...(watching ? { recheckMs: RECOVERY.tickMs } : {}), placements: this.notes.after(since) };
  }

  observe(report: HealthReport): void {
    this.policy = { circuit: report.policy.circuit, health: report.policy.health };
    const now = Date.now();
    for (const ref of report.upstreams) this.track(ref, now);
    for (const a of report.attempts) {
      const t = this.upstreams.get(upstreamKey(a.url));
      if (!t) continue;
      if (a.ok) t.health = { ...t.health, circuit: recordSuccess(t.health.circuit), readyAt: now };
      else if ((a.kind && countsAgainstUpstream(a.kind)) || a.retryAfterMs !== undefined) {
        t.health = { ...t.health, circuit: recordFailure(t.health.circuit, now, this.policy.circuit, a.retryAfterMs) };
      }
    }
    this.notes.add(report.placements ?? []);
    // `?? []`: an isolate still running the previous deploy sends no `outcomes` list.
    const outcomes = report.outcomes ?? [];
    for (const outcome of outcomes) countOutcome(this.traffic, outcome);
    if (outcomes.length) this.dirty = true;
    this.touch();
  }

  /** For /metrics and the status page. */
  status(): { traffic: TrafficMetrics; upstreams: Array<{ url: string; health: UpstreamHealth; circuit: CircuitState; usedAt: number }> } {
    const now = Date.now();
    return {
      traffic: this.traffic,
      upstreams: [...this.upstreams.entries()].map(([url, t]) => ({ url, health: t.health, circuit: circuitState(t.health.circuit, now), usedAt: t.usedAt })),
    };
  }

  /**
   * One tick: samples the servers due (a recovering one every tick, the others every
   * `health.sampleMs`) and plans the next. Only recovering servers' samples are awaited: a busy
   * server's slow `/slots` must not hold back the next look at one coming back.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const active = [...this.upstreams.values()].filter((t) => now - t.usedAt < this.policy.health.idleStopMs && !t.sampling);
    const recovering = active.filter((t) => this.recovering(t, now));
    // Half a tick early: a sample due just after this tick would otherwise wait a whole period more.
    const due = active.filter((t) => !recovering.includes(t) && now - t.health.checkedAt >= this.policy.health.sampleMs - RECOVERY.tickMs / 2);
    for (const t of due) void this.sampleOnce(t);
    await Promise.all(recovering.map((t) => this.sampleOnce(t)));
    if (pruneTraffic(this.traffic, Date.now())) this.dirty = true;
    if (this.dirty) {
      this.dirty = false;
      await this.ctx.storage.put("traffic", this.traffic);
    }
    if (Date.now() - this.lastTraffic < this.policy.health.idleStopMs) {
      const watching = [...this.upstreams.values()].some((t) => this.recovering(t, Date.now()));
      this.alarmAt = Date.now() + (watching ? Math.min(RECOVERY.tickMs, this.policy.health.sampleMs) : this.policy.health.sampleMs);
      await this.ctx.storage.setAlarm(this.alarmAt);
    } else this.alarmAt = 0;
  }

  /** Down or loading for less than the recovery watch: sampled every tick. */
  private recovering(t: Tracked, now: number): boolean {
    return t.downSince !== undefined && now - t.downSince < RECOVERY.watchMs && now - t.usedAt < this.policy.health.idleStopMs;
  }

  private async sampleOnce(t: Tracked): Promise<void> {
    t.sampling = true;
    try {
      await sampleUpstream(t, this.env, this.policy);
    } catch {
      // sampleUpstream() records every failure as a state; nothing else can throw here.
    } finally {
      t.sampling = false;
    }
    const state = t.health.state;
    if (state === "ready" || state === "unknown") t.downSince = undefined;
    else if (t.downSince === undefined) {
      t.downSince = t.health.checkedAt;
      // Found down by a sample the tick did not wait for: the watch starts now, not a period later.
      const soon = Date.now() + RECOVERY.tickMs;
      if (this.alarmAt > soon) {
        this.alarmAt = soon;
        await this.ctx.storage.setAlarm(soon);
      }
    }
  }

  private track(ref: UpstreamRef, now: number): void {
    const key = upstreamKey(ref.url);
    const t = this.upstreams.get(key);
    if (t) {
      t.usedAt = now;
      t.ref = ref;
    } else {
      this.upstreams.set(key, { ref, usedAt: now, health: { state: "unknown", circuit: CLOSED, checkedAt: 0 } });
    }
  }

  private touch(): void {
    const now = Date.now();
    this.lastTraffic = now;
    if (this.alarmAt > now - 5000) return;
    this.alarmAt = now + this.policy.health.sampleMs;
    void this.ctx.storage.getAlarm().then((at) => {
      if (at === null) return this.ctx.storage.setAlarm(this.alarmAt);
      this.alarmAt = at;
    });
  }
}
