// An isolate's side of upstream health: its copy of the hub's snapshot, read by requests without
// waiting, and their signals and outcomes sent back to the hub in batches.
import type { HealthHub } from "./health-hub.ts";
import type { Config } from "../config/config.ts";
import type { EnvVars } from "../config/env-vars.ts";
import { wakeableDelay } from "../lib/wakeable-delay.ts";
import { CLOSED, recordFailure, recordSuccess } from "./circuit-breaker.ts";
import { countsAgainstUpstream, type FailureKind } from "./classify-failure.ts";
import { EMPTY_SNAPSHOT, upstreamKey, type HealthSnapshot, type UpstreamHealth } from "./upstream-health.ts";
import type { AttemptSignal, HealthReport, PlacementNews, PlacementNote, RequestOutcome, UpstreamRef } from "./health-report.ts";

// The isolate's copy of the hub's snapshot, reused for `health.snapshotTtlMs` and refreshed in the
// background: a request never waits on the hub. Passive signals update this copy at once (so this
// isolate stops sending to a failing upstream immediately) and reach the hub with `waitUntil`.
let cached: { snapshot: HealthSnapshot; fetchedAt: number; refreshing: boolean } = { snapshot: EMPTY_SNAPSHOT, fetchedAt: 0, refreshing: false };
/** When this isolate last changed an upstream's circuit itself: a hub snapshot asked for before that is older news. */
const localAt = new Map<string, number>();

/** The last placement note this isolate has from the hub, and who hears of new ones (routing's ledger). */
let notesSeq: number | undefined;
let placementListener: ((notes: PlacementNote[]) => void) | undefined;

let restartListener: ((server: string, at: number) => void) | undefined;
let routerListener: ((server: string, models: NonNullable<UpstreamHealth["routerModels"]>) => void) | undefined;

/** Routing's model pool hears each router's models as the hub's sample read them. */
export function onRouterModels(listener: (server: string, models: NonNullable<UpstreamHealth["routerModels"]>) => void): void {
  routerListener = listener;
}

/** Routing's ledger hears every isolate's placements from here, as the hub's snapshots bring them. */
export function onPlacementNotes(listener: (notes: PlacementNote[]) => void): void {
  placementListener = listener;
}

/** Routing's ledger hears of servers that restarted (their `restartedAt`), as the hub's snapshots bring them. */
export function onRestarts(listener: (server: string, at: number) => void): void {
  restartListener = listener;
}

/** Finished requests' signals and outcomes not yet sent to the hub. */
interface Outbox {
  upstreams: Map<string, UpstreamRef>;
  attempts: AttemptSignal[];
  outcomes: RequestOutcome[];
  placements: PlacementNote[];
  policy?: HealthReport["policy"];
  /** A delayed send is pending (in some request's waitUntil). */
  scheduled: boolean;
  /** Ends that send's wait at once (sendHealthNow). */
  wake?: () => void;
}
const OUTBOX_MAX = 256;
const emptyOutbox = (): Outbox => ({ upstreams: new Map(), attempts: [], outcomes: [], placements: [], scheduled: false });
let outbox = emptyOutbox();

function sendOutbox(hub: DurableObjectStub<HealthHub>): Promise<void> {
  const out = outbox;
  outbox = emptyOutbox();
  if (!out.policy || (!out.attempts.length && !out.outcomes.length && !out.upstreams.size)) return Promise.resolve();
  const report: HealthReport = { upstreams: [...out.upstreams.values()], attempts: out.attempts, outcomes: out.outcomes, policy: out.policy, ...(out.placements.length ? { placements: out.placements } : {}) };
  return hub.observe(report).catch(() => {});
}

export function healthHub(env: EnvVars): DurableObjectStub<HealthHub> | null {
  const ns = env.HEALTH_HUB as DurableObjectNamespace<HealthHub> | undefined;
  return ns ? ns.getByName("health") : null;
}

/** One request's view of upstream health and its passive signals, flushed to the hub once. */
export class HealthRecorder {
  private readonly signals: AttemptSignal[] = [];
  private readonly placements: PlacementNote[] = [];
  private flushed = false;

  constructor(
    private readonly env: EnvVars,
    private readonly config: Config,
    private readonly upstreams: UpstreamRef[],
    private readonly waitUntil?: (p: Promise<unknown>) => void,
  ) {}

  /** The cached snapshot (possibly empty or a second old); starts a refresh when stale (sooner while the hub watches a server come back). */
  snapshot(now = Date.now()): HealthSnapshot {
    const ttl = Math.min(this.config.health.snapshotTtlMs, cached.snapshot.recheckMs ?? Infinity);
    if (now - cached.fetchedAt > ttl && !cached.refreshing) {
      const hub = healthHub(this.env);
      if (hub) {
        cached.refreshing = true;
        const askedAt = Date.now();
        const refresh = hub
          .snapshot(notesSeq)
          .then((s) => {
            const { placements, ...fresh } = s as HealthSnapshot & { placements?: PlacementNews };
            if (placements) {
              notesSeq = placements.seq;
              if (placements.notes.length) placementListener?.(placements.notes);
            }
            const upstreams = { ...fresh.upstreams };
            if (restartListener) for (const [key, h] of Object.entries(upstreams)) if (h.restartedAt !== undefined) restartListener(key, h.restartedAt);
            if (routerListener) for (const [key, h] of Object.entries(upstreams)) if (h.routerModels) routerListener(key, h.routerModels);
            for (const [key, at] of localAt) {
              const mine = cached.snapshot.upstreams[key];
              if (at >= askedAt && mine) upstreams[key] = { ...(upstreams[key] ?? mine), circuit: mine.circuit, ...latestReady(upstreams[key], mine) };
            }
            cached = { snapshot: { ...fresh, upstreams }, fetchedAt: Date.now(), refreshing: false };
          })
          .catch(() => {
            cached.refreshing = false;
          });
        this.defer(refresh);
      }
    }
    return cached.snapshot;
  }

  /** The request was placed on a llama-server and answered there: other isolates should know. */
  placed(note: PlacementNote): void {
    this.placements.push(note);
  }

  success(url: string): void {
    this.signals.push({ url, ok: true });
    // It answered: ready now, whatever the last sample said (a request that finds it gone later may wait for its restart).
    this.update(url, (h) => ({ ...h, circuit: recordSuccess(h.circuit), readyAt: Date.now() }));
  }

  failure(url: string, kind: FailureKind, retryAfterMs?: number): void {
    this.signals.push({ url, ok: false, kind, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
    if (!countsAgainstUpstream(kind) && retryAfterMs === undefined) return;
    const now = Date.now();
    this.update(url, (h) => ({ ...h, circuit: recordFailure(h.circuit, now, this.config.circuit, retryAfterMs) }));
  }

  /**
   * Hands this request's signals and outcome to the isolate's outbox (once). A failed attempt is
   * news other isolates need now, so it is sent at once; otherwise the outbox goes to the hub within
   * `health.snapshotTtlMs`, with whatever other requests added meanwhile.
   */
  finish(outcome?: RequestOutcome): void {
    if (this.flushed) return;
    this.flushed = true;
    if (!this.env.HEALTH_HUB) return;
    for (const ref of this.upstreams) outbox.upstreams.set(upstreamKey(ref.url), ref);
    outbox.attempts.push(...this.signals);
    outbox.placements.push(...this.placements);
    if (outcome) outbox.outcomes.push(outcome);
    outbox.policy = { circuit: this.config.circuit, health: { sampleMs: this.config.health.sampleMs, idleStopMs: this.config.health.idleStopMs } };
    const urgent = this.signals.some((s) => !s.ok) || this.config.health.snapshotTtlMs === 0 || outbox.outcomes.length >= OUTBOX_MAX;
    // The hub's stub only when something is sent (getByName is a call into the runtime).
    if (urgent) this.defer(sendOutbox(healthHub(this.env)!));
    else if (!outbox.scheduled) {
      const box = outbox;
      box.scheduled = true;
      // Sends this outbox only: if an urgent send took it meanwhile, a later request schedules anew.
      const delay = wakeableDelay(this.config.health.snapshotTtlMs);
      box.wake = delay.wake;
      this.defer(delay.ended.then(() => (outbox === box ? sendOutbox(healthHub(this.env)!) : undefined)));
    }
  }

  private update(url: string, change: (h: UpstreamHealth) => UpstreamHealth): void {
    const key = upstreamKey(url);
    localAt.set(key, Date.now());
    if (localAt.size > 1000) localAt.delete(localAt.keys().next().value!);
    const current = cached.snapshot.upstreams[key] ?? { state: "unknown", circuit: CLOSED, checkedAt: 0 };
    cached = { ...cached, snapshot: { ...cached.snapshot, upstreams: { ...cached.snapshot.upstreams, [key]: change(current) } } };
  }

  private defer(p: Promise<unknown>): void {
    if (this.waitUntil) {
      try {
        this.waitUntil(p);
        return;
      } catch {}
    }
    p.catch(() => {});
  }
}

/**
 * Tests: the outbox's delayed send now, its wait ended (the request that scheduled it then sends it),
 * so that a test's wait for a request's deferred work (test/workerd/harness.ts) need not last the
 * `health.snapshotTtlMs` the send waits in production.
 */
export function sendHealthNow(): void {
  outbox.wake?.();
}

/** Tests: forget the isolate's copy. */
export function resetHealthCache(): void {
  cached = { snapshot: EMPTY_SNAPSHOT, fetchedAt: 0, refreshing: false };
  outbox = emptyOutbox();
  notesSeq = undefined;
}

/** The later of two copies' `readyAt` (the hub's samples, this isolate's own answers). */
function latestReady(a: UpstreamHealth | undefined, b: UpstreamHealth): { readyAt?: number } {
  const at = Math.max(a?.readyAt ?? -Infinity, b.readyAt ?? -Infinity);
  return Number.isFinite(at) ? { readyAt: at } : {};
}
