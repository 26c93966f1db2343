// One health sample of one upstream, as the health hub takes it: its state (`/health`, or an
// OpenAI-compatible server's `GET /v1/models`), its load, its circuit after the sample, and restarts.
import { secretOf, type EnvVars } from "../config/env-vars.ts";
import { afterSample, type BreakerPolicy, type Circuit } from "./circuit-breaker.ts";
import type { UpstreamRef } from "./health-report.ts";
import { readServerLoad, type Load, type LoadMemo } from "./read-server-load.ts";
import type { UpstreamHealth } from "./upstream-health.ts";

/** An upstream the hub tracks: its health and what the samples remember of it between them. */
export interface Tracked extends LoadMemo {
  ref: UpstreamRef;
  health: UpstreamHealth;
  usedAt: number;
  /** A sample found it down or loading while its circuit was not closed: it restarted (see probed). */
  sawDown?: boolean;
  /** Since when samples have found it down or loading (unset while ready): the recovery watch (RECOVERY). */
  downSince?: number;
  /** A sample of it is under way: the next tick does not start another. */
  sampling?: boolean;
  /** The last sample that found its process gone (connection refused, or loading), until one finds it ready: a restart. */
  goneAt?: number;
}

/** What a sample needs of the hub's policy: the circuit's, and the sample period (bounds the sample's timeouts). */
export interface SamplePolicy {
  circuit: BreakerPolicy;
  health: { sampleMs: number };
}

/** Samples `t` and sets `t.health` from what it found. Every failure is recorded as a state; it does not throw. */
export async function sampleUpstream(t: Tracked, env: EnvVars, policy: SamplePolicy): Promise<void> {
  const timeoutMs = Math.max(200, Math.min(2000, policy.health.sampleMs));
  const base = t.ref.url.replace(/\/+$/, "").replace(/\/v1$/, "");
  const headers: Record<string, string> = { ...t.ref.headers };
  const key = t.ref.apiKeySecret ? secretOf(env, t.ref.apiKeySecret) : undefined;
  if (key) headers.authorization = `Bearer ${key}`;
  if (t.ref.probe === "models") return sampleModels(t, policy, base, headers, timeoutMs);
  let state: UpstreamHealth["state"] = "down";
  let gone = false;
  let load: Load = {};
  // A server found gone is stamped with when it was asked: it answered "loading" after that, and may
  // be ready by the time the answer is read.
  const askedAt = Date.now();
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
      load = await readServerLoad(t, base, headers, timeoutMs);
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
  const circuit = probed(t, policy, state, now);
  // A sample that could not read /slots (a timeout under load, say) keeps the last reading: the
  // admission queue gates on the slot count, and losing it would let every waiter through at once.
  const previous = t.health;
  const slots = slotsTotal !== undefined ? { slotsTotal, slotsBusy, ...(slotsReadAt ? { slotsReadAt } : {}) } : previous.slotsTotal !== undefined ? { slotsTotal: previous.slotsTotal, slotsBusy: previous.slotsBusy, ...(previous.slotsReadAt ? { slotsReadAt: previous.slotsReadAt } : {}) } : {};
  t.health = { state, circuit, checkedAt: now, ...slots, ...(contextWindow !== undefined ? { contextWindow } : {}), ...(routerModels ? { routerModels } : {}), ...restartedAt(t, state, gone, askedAt), ...readyAt(previous, state, now) };
}

/**
 * An OpenAI-compatible server: `GET /v1/models` and nothing else (it has none of llama-server's
 * endpoints). An answer is ready; 404 or 405 too (up, without a model list); 503 loading; anything
 * else (no answer, a refused key, a 5xx) down.
 */
async function sampleModels(t: Tracked, policy: SamplePolicy, base: string, headers: Record<string, string>, timeoutMs: number): Promise<void> {
  let state: UpstreamHealth["state"] = "down";
  let gone = false;
  const askedAt = Date.now();
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
  t.health = { state, circuit: probed(t, policy, state, now), checkedAt: now, ...restartedAt(t, state, gone, askedAt), ...readyAt(t.health, state, now) };
}

/**
 * When the server last restarted (`restartedAt`), kept across samples: once a sample finds it ready
 * after samples found its process gone (refused, or loading; a timeout may be a busy server, not a
 * dead one), the last of those (when it was asked). Whatever was placed there before is not in its prompt cache; what
 * was served there after may be (a request can reach it before the hub sees it ready).
 */
function restartedAt(t: Tracked, state: UpstreamHealth["state"], gone: boolean, askedAt: number): { restartedAt?: number } {
  if (gone) t.goneAt = askedAt;
  else if (state === "ready" && t.goneAt !== undefined) {
    const at = t.goneAt;
    t.goneAt = undefined;
    return { restartedAt: at };
  }
  return t.health.restartedAt !== undefined ? { restartedAt: t.health.restartedAt } : {};
}

/** The circuit after a sample (circuit-breaker.ts afterSample: a server that restarted rejoins at once). */
function probed(t: Tracked, policy: SamplePolicy, state: UpstreamHealth["state"], now: number): Circuit {
  const next = afterSample(t.health.circuit, t.sawDown === true, state === "ready", now, policy.circuit);
  t.sawDown = next.sawDown;
  return next.circuit;
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
