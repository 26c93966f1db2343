// Whether a llama-server is a router (router mode: `--models-dir`, no `-m`) and, if so, its models and
// their status now: `/props` (role, `max_instances`) and `/models`, each bounded in size and time.
import { fetchFresh } from "../../http/fetch-fresh.ts";
import { readCapped } from "../../http/read-capped.ts";
import { parseRouterModels, parseRouterProps, type RouterModel } from "../../health/parse-router-models.ts";
import { parseTotalSlots } from "../../health/parse-total-slots.ts";
import { llamaRootUrl } from "./llama-root-url.ts";

/** What a read found: not a router, or a router with its model limit and models. */
export type RouterPool = { router: false } | { router: true; modelsMax: number; models: RouterModel[]; slots?: number };

/** `/models` lists about 1 KB per model (its args and preset): 1 MiB holds the MAX_MODELS kept. */
const MAX_BYTES = 1024 * 1024;

/**
 * Reads the server at `baseUrl`: null when it could not tell (no answer within `timeoutMs`, a non-JSON
 * or oversized body), `{router: false}` when its `/props` is a single model's. Never throws.
 */
export async function readRouterPool(baseUrl: string, headers: Record<string, string>, timeoutMs: number): Promise<RouterPool | null> {
  const signal = AbortSignal.timeout(timeoutMs);
  const own = await getJson(llamaRootUrl(baseUrl, "/props"), headers, signal);
  if (own === undefined) return null;
  const router = parseRouterProps(own);
  if (!router) return { router: false };
  const list = await getJson(llamaRootUrl(baseUrl, "/models"), headers, signal);
  const models = list === undefined ? null : parseRouterModels(list);
  if (!models) return null;
  // A loaded model's slots (`--parallel`, the same for every model the router starts): `autoload=false`,
  // or asking would load it.
  const loaded = models.find((m) => m.status === "loaded");
  const props = loaded ? await getJson(llamaRootUrl(baseUrl, `/props?model=${encodeURIComponent(loaded.id)}&autoload=false`), headers, signal) : undefined;
  const slots = props === undefined ? undefined : parseTotalSlots(props);
  return { router: true, modelsMax: router.modelsMax, models, ...(slots !== undefined ? { slots } : {}) };
}

/** A GET's JSON body, or undefined (no answer, not 200, not JSON, too large). */
async function getJson(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<unknown> {
  try {
    const res = await fetchFresh(url, { headers: { ...headers, accept: "application/json" }, signal });
    if (!res.ok || !res.body) {
      await res.body?.cancel().catch(() => {});
      return undefined;
    }
    const bytes = await readCapped(res.body, MAX_BYTES, () => new Error("too large"));
    return JSON.parse(new TextDecoder().decode(bytes)) as unknown;
  } catch {
    return undefined;
  }
}
