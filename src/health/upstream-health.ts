// What the health hub knows about each upstream (state, slots, circuit), as isolates read it.
import type { Circuit } from "./circuit-breaker.ts";
import type { RouterModel } from "./parse-router-models.ts";

/** What the health hub knows about one llama-server, keyed by its base URL. */
export interface UpstreamHealth {
  /** From `/health`: ready (200), loading (503), down (no answer), unknown (never sampled). */
  state: "ready" | "loading" | "down" | "unknown";
  /** From `/slots`: how many slots exist and how many are processing. */
  slotsTotal?: number;
  slotsBusy?: number;
  /** When `/slots` was asked and answered (hub clock): the busy slots are what the server held at some moment between. */
  slotsReadAt?: { from: number; to: number };
  /** From `/slots`: the smallest slot's `n_ctx`, the most one request can hold there. */
  contextWindow?: number;
  circuit: Circuit;
  checkedAt: number;
  /**
   * A router (llama-server router mode): its models and their status from its `/models`, and when
   * that was read (hub clock). Its slots are then its loaded models' (`/slots?model=`).
   */
  routerModels?: { at: number; models: RouterModel[] };
  /**
   * When a sample last found it ready, or a request was last answered there (hub clock; an
   * isolate's copy also its own answers). A server down since less than a while is one
   * restarting (a crash, an OOM kill, a deploy): a request that finds every server of its model
   * down waits for it to come back (routing/attempt/worth-waiting.ts); one never ready, or down for longer,
   * is answered at once.
   */
  readyAt?: number;
  /** It restarted after this moment (the hub's last sample finding its process gone before it was ready again): its prompt cache holds nothing placed before. */
  restartedAt?: number;
}

export interface HealthSnapshot {
  at: number;
  upstreams: Record<string, UpstreamHealth>;
  /** Set while a server is being watched back to life: isolates refresh their copy this often instead of every `health.snapshotTtlMs`. */
  recheckMs?: number;
}

export const EMPTY_SNAPSHOT: HealthSnapshot = { at: 0, upstreams: {} };

/** The key an upstream's health is kept under: its base URL without a trailing slash or `/v1`. */
export function upstreamKey(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}
