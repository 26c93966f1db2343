// What a health sample reads of a ready llama-server's load: its slots (total, busy, context window)
// from `/slots` (a router's from its loaded models'), else `/props`, and `/metrics` when it is on.
import { parseLlamaMetrics } from "./parse-llama-metrics.ts";
import { parseTotalSlots } from "./parse-total-slots.ts";
import { parseRouterModels, type RouterModel } from "./parse-router-models.ts";

/** What a sample read of a ready llama-server's slots. */
export interface Load {
  routerModels?: { at: number; models: RouterModel[] };
  slotsTotal?: number;
  slotsBusy?: number;
  slotsReadAt?: { from: number; to: number };
  contextWindow?: number;
}

/** What the hub remembers of a server between samples so as not to ask again what it cannot answer. */
export interface LoadMemo {
  /** False once /metrics answered without llama-server's gauges (no --metrics): not asked again. */
  metrics?: boolean;
  /** Its `/props` `total_slots`, read once when `/slots` is off (`--no-slots`); null: /props told none. */
  propsSlots?: number | null;
}

/** Loaded models whose `/slots` a router's sample reads (each a request): a pool of more is rare. */
const ROUTER_SLOTS_READ = 8;
/** `/models` lists about 1 KB per model: the most a sample reads. */
const ROUTER_MODELS_MAX_BYTES = 1024 * 1024;

/** A ready llama-server's slots (total, busy, context window): `/slots`, else `/props`, and `/metrics` when on. */
export async function readServerLoad(memo: LoadMemo, base: string, headers: Record<string, string>, timeoutMs: number): Promise<Load> {
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
    memo.propsSlots ??= await propsSlots(base, headers, timeoutMs);
    load.slotsTotal = memo.propsSlots ?? undefined;
  }
  // With --metrics, requests waiting for a slot (deferred) count as load too; /slots cannot show them.
  if (memo.metrics !== false) {
    const m = await fetch(`${base}/metrics`, { headers, signal: AbortSignal.timeout(timeoutMs) });
    const parsed = m.ok ? parseLlamaMetrics(await m.text()) : (await m.body?.cancel().catch(() => {}), null);
    memo.metrics = parsed !== null;
    if (parsed) {
      load.slotsBusy = parsed.processing + parsed.deferred;
      load.slotsTotal ??= Math.max(1, parsed.processing);
    }
  }
  return load;
}

/** `/props` `total_slots`; null when it answered without one, undefined when it did not answer (asked again). */
async function propsSlots(base: string, headers: Record<string, string>, timeoutMs: number): Promise<number | null | undefined> {
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
