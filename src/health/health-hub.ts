// The Durable Object that keeps upstream health for every isolate: it samples the upstreams in use,
// runs their circuit breakers and counts the traffic behind /metrics.
import { DurableObject } from "cloudflare:workers";
import { secretOf } from "../config/env-vars.ts";
import { CLOSED, afterSample, recordFailure, recordSuccess, circuitState, type BreakerPolicy, type Circuit } from "./circuit-breaker.ts";
import { countsAgainstUpstream } from "./classify-failure.ts";
import type { HealthReport, PlacementNews, PlacementNote, UpstreamRef } from "./health-report.ts";
import { countOutcome, pruneTraffic, type TrafficMetrics } from "./traffic-metrics.ts";
import type { CircuitState } from "./circuit-breaker.ts";
import { upstreamKey, type HealthSnapshot, type UpstreamHealth } from "./upstream-health.ts";
import { parseLlamaMetrics } from "./parse-llama-metrics.ts";
import { parseTotalSlots } from "./parse-total-slots.ts";
import { parseRouterModels, type RouterModel } from "./parse-router-models.ts";

interface Tracked {
  ref: UpstreamRef;
  health: UpstreamHealth;
  usedAt: number;
  /** False once /metrics answered without llama-server's gauges (no --metrics): not asked again. */
  metrics?: boolean;
  /** Its `/props` `total_slots`, read once when `/slots` is off (`--no-slots`); null: /props told none. */
  propsSlots?: number | null;
  /** A sample found it down or loading while its circuit was not closed: it restarted (see probed). */
  sawDown?: boolean;
  /** Since when samples have found it down or loading (unset while ready): the recovery watch (RECOVERY). */
  downSince?: number;
  /** A sample of it is under way: the next tick does not start another. */
  sampling?: boolean;
  /** The last sample that found its process gone (connection refused, or loading), until one finds it ready: a restart. */
  goneAt?: number;
}

/** What a sample read of a ready llama-server's slots. */
interface Load {
  routerModels?: { at: number; models: RouterModel[] };
  slotsTotal?: number;
  slotsBusy?: number;
  slotsReadAt?: { from: number; to: number };
  contextWindow?: number;
}

/** Placement notes kept for isolates to catch up on, and the most one snapshot carries. */
const NOTES_KEPT = 4096;
const NOTES_PER_SNAPSHOT = 1024;

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
  /** The latest placement notes, oldest first; `notesSeq` numbers the last one. In memory only: a lost note costs a recompute. */
  private notes: PlacementNote[] = [];
  private notesSeq = 0;

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
    // A `since` ahead of this hub's count is another instance's (the hub restarted): send what there is.
    const from = since === undefined || since > this.notesSeq ? 0 : this.notes.length - (this.notesSeq - since);
    const notes = this.notes.slice(Math.max(0, from, this.notes.length - NOTES_PER_SNAPSHOT));
    const now = Date.now();
    const watching = [...this.upstreams.values()].some((t) => this.recovering(t, now));
    return { at: now, upstreams, ...(watching ? { recheckMs: RECOVERY.tickMs } : {}), placements: { seq: this.notesSeq, notes } };
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
    for (const note of report.placements ?? []) {
      this.notes.push(note);
      this.notesSeq++;
    }
    if (this.notes.length > NOTES_KEPT) this.notes.splice(0, this.notes.length - NOTES_KEPT);
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
      await this.sample(t);
    } catch {
      // sample() records every failure as a state; nothing else can throw here.
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

  private async sample(t: Tracked): Promise<void> {
    const timeoutMs = Math.max(200, Math.min(2000, this.policy.health.sampleMs));
    const base = t.ref.url.replace(/\/+$/, "").replace(/\/v1$/, "");
    const headers: Record<string, string> = { ...t.ref.headers };
    const key = t.ref.apiKeySecret ? secretOf(this.env, t.ref.apiKeySecret) : undefined;
    if (key) headers.authorization = `Bearer ${key}`;
    if (t.ref.probe === "models") return this.sampleModels(t, base, headers, timeoutMs);
    let state: UpstreamHealth["state"] = "down";
    let gone = false;
    let load: Load = {};
    try {
      const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(timeoutMs) });
      state = res.status === 200 ? "ready" : res.status === 503 ? "loading" : "down";
      gone = state === "loading";
      await res.body?.cancel().catch(() => {});
    } catch (e) {
      gone = !timedOut(e);
    }
    if (state === "ready") {
      try {
        load = await this.readLoad(t, base, headers, timeoutMs);
      } catch (e) {
        // Slow under load: still ready (the last reading stands, below). Refused: it died since /health.
        if (!timedOut(e)) {
          state = "down";
          gone = true;
        }
      }
    }
    const { slotsTotal, slotsBusy, slotsReadAt, contextWindow, routerModels } = load;
    const now = Date.now();
    const circuit = this.probed(t, state, now);
    // A sample that could not read /slots (a timeout under load, say) keeps the last reading: the
    // admission queue gates on the slot count, and losing it would let every waiter through at once.
    const previous = t.health;
    const slots = slotsTotal !== undefined ? { slotsTotal, slotsBusy, ...(slotsReadAt ? { slotsReadAt } : {}) } : previous.slotsTotal !== undefined ? { slotsTotal: previous.slotsTotal, slotsBusy: previous.slotsBusy, ...(previous.slotsReadAt ? { slotsReadAt: previous.slotsReadAt } : {}) } : {};
    t.health = { state, circuit, checkedAt: now, ...slots, ...(contextWindow !== undefined ? { contextWindow } : {}), ...(routerModels ? { routerModels } : {}), ...this.restartedAt(t, state, gone, now), ...readyAt(previous, state, now) };
  }

  /** A ready llama-server's slots (total, busy, context window): `/slots`, else `/props`, and `/metrics` when on. */
  private async readLoad(t: Tracked, base: string, headers: Record<string, string>, timeoutMs: number): Promise<Load> {
    const load: Load = {};
    const askedAt = Date.now();
    const slots = await fetch(`${base}/slots`, { headers, signal: AbortSignal.timeout(timeoutMs) });
    // A router answers 400 without `?model=`: its models' status, then their slots (readRouterLoad).
    if (slots.status === 400) {
      await slots.body?.cancel().catch(() => {});
      const router = await readRouterLoad(base, headers, timeoutMs);
      if (router) return router;
      return load;
    }
    if (slots.ok && (slots.headers.get("content-type") ?? "").includes("json")) {
      const list = (await slots.json()) as unknown;
      if (Array.isArray(list)) {
        load.slotsReadAt = { from: askedAt, to: Date.now() };
        load.slotsTotal = list.length;
        load.slotsBusy = list.filter((s) => (s as { is_processing?: unknown }).is_processing === true).length;
        const windows = list.map((s) => (s as { n_ctx?: unknown }).n_ctx).filter((n): n is number => typeof n === "number" && n > 0);
        if (windows.length) load.contextWindow = Math.min(...windows);
      }
    } else await slots.body?.cancel().catch(() => {});
    // `/slots` off (--no-slots): the count from /props, which every llama-server answers; read once
    // (it changes only with a restart). Busy slots then come only from /metrics, if on.
    if (load.slotsTotal === undefined) {
      t.propsSlots ??= await this.propsSlots(base, headers, timeoutMs);
      load.slotsTotal = t.propsSlots ?? undefined;
    }
    // With --metrics, requests waiting for a slot (deferred) count as load too; /slots cannot show them.
    if (t.metrics !== false) {
      const m = await fetch(`${base}/metrics`, { headers, signal: AbortSignal.timeout(timeoutMs) });
      const parsed = m.ok ? parseLlamaMetrics(await m.text()) : (await m.body?.cancel().catch(() => {}), null);
      t.metrics = parsed !== null;
      if (parsed) {
        load.slotsBusy = parsed.processing + parsed.deferred;
        load.slotsTotal ??= Math.max(1, parsed.processing);
      }
    }
    return load;
  }

  /**
   * An OpenAI-compatible server: `GET /v1/models` and nothing else (it has none of llama-server's
   * endpoints). An answer is ready; 404 or 405 too (up, without a model list); 503 loading; anything
   * else (no answer, a refused key, a 5xx) down.
   */
  private async sampleModels(t: Tracked, base: string, headers: Record<string, string>, timeoutMs: number): Promise<void> {
    let state: UpstreamHealth["state"] = "down";
    let gone = false;
    try {
      const res = await fetch(`${base}/v1/models`, { headers: { ...headers, accept: "application/json" }, signal: AbortSignal.timeout(timeoutMs) });
      await res.body?.cancel().catch(() => {});
      state = res.ok || res.status === 404 || res.status === 405 ? "ready" : res.status === 503 ? "loading" : "down";
      gone = state === "loading";
    } catch (e) {
      state = "down";
      gone = !timedOut(e);
    }
    const now = Date.now();
    t.health = { state, circuit: this.probed(t, state, now), checkedAt: now, ...this.restartedAt(t, state, gone, now), ...readyAt(t.health, state, now) };
  }

  /**
   * When the server last restarted (`restartedAt`), kept across samples: once a sample finds it ready
   * after samples found its process gone (refused, or loading; a timeout may be a busy server, not a
   * dead one), the last of those. Whatever was placed there before is not in its prompt cache; what
   * was served there after may be (a request can reach it before the hub sees it ready).
   */
  private restartedAt(t: Tracked, state: UpstreamHealth["state"], gone: boolean, now: number): { restartedAt?: number } {
    if (gone) t.goneAt = now;
    else if (state === "ready" && t.goneAt !== undefined) {
      const at = t.goneAt;
      t.goneAt = undefined;
      return { restartedAt: at };
    }
    return t.health.restartedAt !== undefined ? { restartedAt: t.health.restartedAt } : {};
  }

  /** The circuit after a sample (circuit-breaker.ts afterSample: a server that restarted rejoins at once). */
  private probed(t: Tracked, state: UpstreamHealth["state"], now: number): Circuit {
    const next = afterSample(t.health.circuit, t.sawDown === true, state === "ready", now, this.policy.circuit);
    t.sawDown = next.sawDown;
    return next.circuit;
  }

  /** `/props` `total_slots`; null when it answered without one, undefined when it did not answer (asked again). */
  private async propsSlots(base: string, headers: Record<string, string>, timeoutMs: number): Promise<number | null | undefined> {
    try {
      const res = await fetch(`${base}/props`, { headers, signal: AbortSignal.timeout(timeoutMs) });
      if (!res.ok || !(res.headers.get("content-type") ?? "").includes("json")) {
        await res.body?.cancel().catch(() => {});
        return null;
      }
      return parseTotalSlots(await res.json()) ?? null;
    } catch {
      return undefined;
    }
  }
}

/** Loaded models whose `/slots` a router's sample reads (each a request): a pool of more is rare. */
const ROUTER_SLOTS_READ = 8;
/** `/models` lists about 1 KB per model: the most a sample reads. */
const ROUTER_MODELS_MAX_BYTES = 1024 * 1024;

/**
 * A router's sample: its `/models` (each model's status, so every isolate's pool is current within a
 * sample), and the slots of its loaded models (`/slots?model=…&autoload=false`: never a load).
 * Null when `/models` is not a router's list.
 */
async function readRouterLoad(base: string, headers: Record<string, string>, timeoutMs: number): Promise<Load | null> {
  const at = Date.now();
  const res = await fetch(`${base}/models`, { headers, signal: AbortSignal.timeout(timeoutMs) });
  const length = Number(res.headers.get("content-length") ?? "0");
  if (!res.ok || length > ROUTER_MODELS_MAX_BYTES) {
    await res.body?.cancel().catch(() => {});
    return null;
  }
  const text = await res.text();
  if (text.length > ROUTER_MODELS_MAX_BYTES) return null;
  let models: RouterModel[] | null = null;
  try {
    models = parseRouterModels(JSON.parse(text));
  } catch {}
  if (!models) return null;
  const load: Load = { routerModels: { at, models } };
  let total = 0;
  let busy = 0;
  const windows: number[] = [];
  for (const m of models.filter((x) => x.status === "loaded").slice(0, ROUTER_SLOTS_READ)) {
    const r = await fetch(`${base}/slots?model=${encodeURIComponent(m.id)}&autoload=false`, { headers, signal: AbortSignal.timeout(timeoutMs) });
    if (!r.ok) {
      await r.body?.cancel().catch(() => {});
      continue;
    }
    const list = (await r.json().catch(() => null)) as unknown;
    if (!Array.isArray(list)) continue;
    total += list.length;
    busy += list.filter((s) => (s as { is_processing?: unknown }).is_processing === true).length;
    for (const s of list) if (typeof (s as { n_ctx?: unknown }).n_ctx === "number") windows.push((s as { n_ctx: number }).n_ctx);
  }
  if (total > 0) {
    load.slotsTotal = total;
    load.slotsBusy = busy;
    load.slotsReadAt = { from: at, to: Date.now() };
    if (windows.length) load.contextWindow = Math.min(...windows);
  }
  return load;
}

/** When a sample last found the server ready: now, if this one did; else what the last sample said. */
function readyAt(previous: UpstreamHealth, state: UpstreamHealth["state"], now: number): { readyAt?: number } {
  if (state === "ready") return { readyAt: now };
  return previous.readyAt !== undefined ? { readyAt: previous.readyAt } : {};
}

/** A fetch that gave up on its own timeout (a slow answer), not one the host refused. */
function timedOut(e: unknown): boolean {
  return e instanceof DOMException ? e.name === "TimeoutError" || e.name === "AbortError" : (e as { name?: unknown } | null)?.name === "TimeoutError";
}
