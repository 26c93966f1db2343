// After a load that failed on a llama-server router: which models the router evicted for it are loaded
// again, chosen against the router's own `/models` read after the failure (this isolate's guess of
// what was evicted can be stale: another isolate's loads, a read that crossed an attempt).
import type { EnvVars } from "../../config/env-vars.ts";
import type { ModelPoolRead, NamedTarget } from "../../upstreams/adapter.ts";
import { adapterOf } from "../../upstreams/registry/adapters.ts";
import { poolStatusOf } from "./model-pool.ts";

/**
 * The models to load again, most recently used first. `evicted` is this isolate's guess, least
 * recently used first; `now` what the router lists after the failure (null: it did not say). Only
 * models it does not hold now, and no more than it has room for: loading more would evict one of
 * them again. Unread, the router's one eviction for one load is taken to be the most recent model.
 */
export function modelsToPutBack(evicted: readonly string[], now: ModelPoolRead | null): string[] {
  const recentFirst = [...evicted].reverse();
  if (!now) return recentFirst.slice(0, 1);
  const held = new Set(now.models.filter((m) => poolStatusOf(m.status) !== "unloaded").map((m) => m.id));
  const listed = new Set(now.models.map((m) => m.id));
  const room = Math.max(0, now.modelsMax - held.size);
  return recentFirst.filter((m) => listed.has(m) && !held.has(m)).slice(0, room);
}

/** Reads the router and loads back what `modelsToPutBack` chooses. Never throws. */
export async function putBackEvicted(target: NamedTarget, evicted: readonly string[], env: EnvVars, timeoutMs = 5000): Promise<void> {
  const adapter = adapterOf(target);
  if (!evicted.length || !adapter.loadPooledModel) return;
  const read = await adapter.readModelPool?.(target, env, timeoutMs).catch(() => null);
  const now = read && read !== "single" ? read : null;
  await Promise.all(modelsToPutBack(evicted, now).map((m) => adapter.loadPooledModel!(target, m, env, timeoutMs)));
}
