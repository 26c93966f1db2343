// llama-server router mode's model list (`GET /models`, each model with its `status`) and its `/props`
// (`role: "router"`, `max_instances`), as plain values: read by the llama adapter's pool discovery.
// Bounded: at most MAX_MODELS entries, names of at most MODEL_ID_MAX characters; no regex on the text.

/** A model's state on one router, as `/models` reports it (`status.value`), plus a failed last load. */
export interface RouterModel {
  id: string;
  /** `unloaded`, `loading`, `loaded`, `sleeping`, `downloading`; anything else is kept as "unloaded". */
  status: "unloaded" | "loading" | "loaded" | "sleeping" | "downloading";
  /** The last load failed (`failed: true`, with an `exit_code`): loading it again would fail again. */
  failed: boolean;
}

/** More models than this on one router are ignored (a models dir of thousands is not a pool). */
export const MAX_MODELS = 1000;
const MODEL_ID_MAX = 256;
const STATUSES = new Set<RouterModel["status"]>(["unloaded", "loading", "loaded", "sleeping", "downloading"]);

/**
 * `GET /models` (or `/v1/models`) → the router's models, or null when the list is not a router's
 * (no entry carries a `status` object: a single-model llama-server, or something else).
 */
export function parseRouterModels(body: unknown): RouterModel[] | null {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return null;
  const out: RouterModel[] = [];
  let router = false;
  for (const entry of data.slice(0, MAX_MODELS)) {
    if (!entry || typeof entry !== "object") continue;
    const e = entry as { id?: unknown; status?: unknown; failed?: unknown };
    if (!e.status || typeof e.status !== "object") continue;
    router = true;
    if (typeof e.id !== "string" || e.id === "" || e.id.length > MODEL_ID_MAX) continue;
    const s = e.status as { value?: unknown; failed?: unknown };
    const value = typeof s.value === "string" && STATUSES.has(s.value as RouterModel["status"]) ? (s.value as RouterModel["status"]) : "unloaded";
    out.push({ id: e.id, status: value, failed: s.failed === true || e.failed === true });
  }
  return router ? out : null;
}

/** A router's own `/props` (no `?model=`): its `max_instances` (`--models-max`), or null when it is not a router. */
export function parseRouterProps(body: unknown): { modelsMax: number } | null {
  const p = body as { role?: unknown; max_instances?: unknown } | null;
  if (!p || p.role !== "router") return null;
  const max = typeof p.max_instances === "number" && Number.isInteger(p.max_instances) && p.max_instances > 0 ? p.max_instances : 0;
  // 0 (or absent): no limit the router enforces; placement then never plans an eviction.
  return { modelsMax: max > 0 ? max : Infinity };
}
