// GET /v1/models and /v1/models/{id}: which models a caller can ask for, with their context windows,
// in OpenAI's shape or Anthropic's.
import type { Context } from "hono";
import { anthropicErrorResponse } from "../api/messages/index.ts";
import type { ModelInfo } from "../api/wire/anthropic-wire.ts";
import type { Config } from "../config/config.ts";
import type { EnvVars } from "../config/env-vars.ts";
import { loadConfig } from "../config/load-config.ts";
import { toProxyError } from "../errors/error-envelope.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { AppEnv } from "../auth/app-env.ts";
import { fetchFresh } from "../http/fetch-fresh.ts";
import { browserPolicy } from "../routing/browser-policy.ts";
import { planTargetsFor } from "../routing/plan-targets.ts";
import type { ModelDescription } from "../upstreams/adapter.ts";
import { sessionHub } from "../upstreams/browser/browser-upstream.ts";
import { readLlamaProps } from "../upstreams/llama/read-llama-props.ts";
import { adapterOf, capabilitiesOf, named } from "../upstreams/registry/adapters.ts";
import { routerTargets, zeroConfigTargets } from "../config/config.ts";
import { isolateState } from "../routing/isolate/isolate-state.ts";
import type { NamedTarget } from "../upstreams/adapter.ts";

interface ModelEntry {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  /** The per-slot context, under the names clients read it by. */
  context_window?: number;
  context_length?: number;
  max_model_len?: number;
  capabilities?: { tools: boolean; vision: boolean; reasoning: boolean };
  /** Served by routers (servers that load models on demand): where it is loaded now. */
  x_switchyard?: PoolPresence;
}

/**
 * Where a router-served model is: `loaded` on some server, else `loading` on one, else `available`
 * (any server would load it on the first request; nothing is loaded to answer this list). Per server:
 * the same, or `failed` when its last load there failed lately.
 */
interface PoolPresence {
  status: "loaded" | "loading" | "available";
  servers: Array<{ target: string; status: "loaded" | "loading" | "available" | "failed" }>;
}

/** /props is only worth a short wait for a model list: without it the entry lacks the extra fields. */
const PROPS_TIMEOUT_MS = 2000;

/**
 * `GET /v1/models`: the declared models, or in zero config the models the llama-server reports plus
 * those of connected browser sessions (each is served with the session as a fallback). A llama-server
 * that cannot be reached is an error only when no session serves anything either. Entries served by
 * a llama-server carry its context window and capabilities; with `anthropic-version`, the list is in
 * Anthropic's shape.
 */
export async function listModels(c: Context<AppEnv>): Promise<Response> {
  const anthropic = wantsAnthropic(c);
  try {
    const config = loadConfig(c.env);
    const data = await modelEntries(c, config);
    if (!anthropic) return c.json({ object: "list", data });
    const models = data.map(anthropicModel);
    return c.json({ data: models, has_more: false, first_id: models[0]?.id ?? null, last_id: models.at(-1)?.id ?? null });
  } catch (e) {
    if (anthropic) return anthropicErrorResponse(toProxyError(e), undefined, c.get("requestId"));
    throw e;
  }
}

async function modelEntries(c: Context<AppEnv>, config: Config): Promise<ModelEntry[]> {
  // A caller whose requests browser sessions may not serve is not offered what only they serve.
  const denied = browserPolicy(config, c.get("principal")) === "deny";
  if (config.models) {
    const declared = await declaredModels(c, config, undefined, denied);
    if (!config.routers) return declared;
    const pooled = (await routerModels(c, routerTargets(config).map((t) => named(t)))) ?? [];
    return [...declared, ...pooled.filter((m) => !declared.some((d) => d.id === m.id))];
  }
  // Zero config with a router at LLAMA_URL: its models and where they are loaded.
  const zero = named(zeroConfigTargets(config, "")[0]!.target);
  const pooled = await routerModels(c, [zero]);
  if (pooled) {
    const browser = denied ? [] : await browserModels(c.env);
    return [...pooled, ...browser.filter((m) => !pooled.some((d) => d.id === m.id))];
  }
  const [upstream, browser] = await Promise.all([
    upstreamModels(c, config).then(
      (data) => ({ ok: true as const, data }),
      (error: unknown) => ({ ok: false as const, error }),
    ),
    denied ? [] : browserModels(c.env),
  ]);
  if (!upstream.ok && browser.length === 0) throw upstream.error;
  const data = upstream.ok ? [...upstream.data] : [];
  for (const m of browser) if (!data.some((d) => d.id === m.id)) data.push(m);
  return data;
}

async function browserModels(env: EnvVars): Promise<ModelEntry[]> {
  try {
    const sessions = await sessionHub(env).sessions();
    const ids = new Set(sessions.flatMap((s) => s.models));
    return [...ids].map((id) => ({ id, object: "model", created: 0, owned_by: "browser-session" }));
  } catch {
    return [];
  }
}

/**
 * `GET /v1/models/{id}`: a declared model, else 404 `model_not_found`. In zero config every name is
 * served by the llama-server, so any id answers: its own entry if the server lists it.
 */
export async function getModel(c: Context<AppEnv>): Promise<Response> {
  const anthropic = wantsAnthropic(c);
  try {
    const entry = await modelEntry(c, loadConfig(c.env), c.req.param("id") ?? "");
    return c.json(anthropic ? anthropicModel(entry) : entry);
  } catch (e) {
    if (anthropic) return anthropicErrorResponse(toProxyError(e), undefined, c.get("requestId"));
    throw e;
  }
}

async function modelEntry(c: Context<AppEnv>, config: Config, id: string): Promise<ModelEntry> {
  if (config.routers && config.models && !Object.hasOwn(config.models, id)) {
    const listed = ((await routerModels(c, routerTargets(config).map((t) => named(t)))) ?? []).find((m) => m.id === id);
    if (listed) return listed;
  }
  if (config.models) {
    // An own key only: a client's id such as "constructor" must not find Object.prototype's.
    if (!Object.hasOwn(config.models, id)) {
      throw new ProxyError({ status: 404, code: "model_not_found", param: "model", message: `The model "${id}" does not exist here. GET /v1/models lists the available ones.` });
    }
    // 403 browser_not_allowed, as a request would get, when only browser sessions serve it and the caller may not use them.
    planTargetsFor(config, id, c.get("principal"));
    return (await declaredModels(c, config, id))[0]!;
  }
  const pooled = await routerModels(c, [named(zeroConfigTargets(config, "")[0]!.target)]);
  const listed = (pooled ?? (await upstreamModels(c, config))).find((m) => m.id === id);
  return listed ?? { id, object: "model", created: 0, owned_by: "llamacpp" };
}

/**
 * Anthropic's model object; `created_at` is RFC 3339 (the epoch when the server gives no date).
 * `capabilities` (Anthropic's own features: batch, citations, effort…) and `max_tokens` (an output
 * cap; a llama-server's is the context window it shares with the prompt) are null: nothing applies.
 */
function anthropicModel(m: ModelEntry): ModelInfo {
  return {
    type: "model",
    id: m.id,
    display_name: m.id,
    created_at: new Date(m.created * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    max_input_tokens: m.context_window ?? null,
    max_tokens: null,
    capabilities: null,
  };
}

function wantsAnthropic(c: Context<AppEnv>): boolean {
  return c.req.header("anthropic-version") !== undefined;
}

/**
 * Declared models (or the one named `only`), each with what its first target that can describe its
 * model says (a llama-server's /props); `withoutBrowserOnly`: leaving out those only browser sessions serve.
 */
async function declaredModels(c: Context<AppEnv>, config: Config, only?: string, withoutBrowserOnly = false): Promise<ModelEntry[]> {
  const models = config.models ?? {};
  const ids = (only !== undefined ? [only] : Object.keys(models)).filter((id) => !withoutBrowserOnly || models[id]!.targets.some((t) => !capabilitiesOf(named(t)).teammateDevice));
  const ask = { env: c.env, requestId: c.get("requestId"), timeoutMs: PROPS_TIMEOUT_MS };
  return Promise.all(
    ids.map(async (id) => {
      const targets = models[id]!.targets.map((t) => named(t));
      const target = targets.find((t) => adapterOf(t).describeModel);
      const [props, presence] = await Promise.all([target ? adapterOf(target).describeModel!(target, ask).catch(() => null) : null, poolPresence(c, targets, id)]);
      return { ...withProps({ id, object: "model", created: 0, owned_by: "switchyard" }, props), ...(presence ? { x_switchyard: presence } : {}) };
    }),
  );
}

/**
 * Switchyard serves tools on every llama-server (prompt mode where the template has none), so
 * `tools` is always true once the server is known.
 */
function withProps(entry: ModelEntry, props: ModelDescription | null, nCtx?: number): ModelEntry {
  const context = nCtx ?? props?.contextWindow;
  return {
    ...entry,
    ...(context !== undefined ? { context_window: context, context_length: context, max_model_len: context } : {}),
    ...(props ? { capabilities: { tools: true, vision: props.vision, reasoning: props.reasoning } } : {}),
  };
}

/**
 * Every model the routers among `targets` list, each with where it is loaded (their `/models`, read
 * through the isolate's pool, never loading anything); null when none of them is a router.
 */
async function routerModels(c: Context<AppEnv>, targets: NamedTarget[]): Promise<ModelEntry[] | null> {
  const { pool, poolReads } = isolateState();
  await poolReads.discover(targets, c.env, (p) => deferred(c, p), { waitAll: true });
  const routers = targets.filter((t) => {
    const server = capabilitiesOf(t).server;
    return server !== null && pool.isRouter(server.key);
  });
  if (!routers.length) return null;
  const ids: string[] = [];
  for (const t of routers) for (const id of pool.modelIds(capabilitiesOf(t).server!.key)) if (!ids.includes(id)) ids.push(id);
  return ids.map((id) => {
    const presence = presenceOf(routers, id);
    return { id, object: "model" as const, created: 0, owned_by: "llamacpp", ...(presence ? { x_switchyard: presence } : {}) };
  });
}

/** Where the routers among a declared model's targets hold it (null when none is a router). */
async function poolPresence(c: Context<AppEnv>, targets: NamedTarget[], id: string): Promise<PoolPresence | null> {
  if (!targets.some((t) => capabilitiesOf(t).server !== null && adapterOf(t).readModelPool)) return null;
  await isolateState().poolReads.discover(targets, c.env, (p) => deferred(c, p), { waitAll: true });
  return presenceOf(targets, id);
}

function presenceOf(targets: NamedTarget[], id: string): PoolPresence | null {
  const { pool } = isolateState();
  const servers: PoolPresence["servers"] = [];
  for (const t of targets) {
    const server = capabilitiesOf(t).server;
    if (!server || !pool.isRouter(server.key)) continue;
    const m = pool.models(server.key).find((x) => x.id === (server.upstreamModel ?? id));
    if (!m) continue;
    servers.push({ target: t.name, status: m.failed ? "failed" : m.status === "unloaded" ? "available" : m.status });
  }
  if (!servers.length) return null;
  const status = servers.some((s) => s.status === "loaded") ? "loaded" : servers.some((s) => s.status === "loading") ? "loading" : "available";
  return { status, servers };
}

function deferred(c: Context<AppEnv>, p: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(p.catch(() => {}));
  } catch {
    p.catch(() => {});
  }
}

async function upstreamModels(c: Context<AppEnv>, config: Config): Promise<ModelEntry[]> {
  const base = config.llamaUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
  const [res, props] = await Promise.all([
    fetchFresh(`${base}/v1/models`, { signal: AbortSignal.timeout(config.timeouts.responseStartMs) }).catch(() => null),
    readLlamaProps(config.llamaUrl, {}, PROPS_TIMEOUT_MS),
  ]);
  if (!res) {
    throw new ProxyError({
      status: 502,
      code: "upstream_unreachable",
      message: `Could not reach the llama-server at ${new URL(config.llamaUrl).origin} to list its models. Check that it is running and LLAMA_URL is right.`,
    });
  }
  if (!res.ok) {
    throw new ProxyError({ status: 502, code: "upstream_error", message: `The llama-server at ${new URL(config.llamaUrl).origin} answered HTTP ${res.status} to /v1/models.` });
  }
  const body = (await res.json().catch(() => ({}))) as { data?: Array<{ id?: unknown; created?: unknown; meta?: { n_ctx?: unknown } }> };
  const listed = (body.data ?? []).filter((m): m is { id: string; created?: unknown; meta?: { n_ctx?: unknown } } => typeof m.id === "string");
  // /props describes the server's one model; in router mode (several) only each entry's meta is its own.
  const shared = listed.length === 1 ? props : null;
  return listed.map((m) =>
    withProps(
      { id: m.id, object: "model", created: typeof m.created === "number" ? m.created : 0, owned_by: "llamacpp" },
      shared,
      typeof m.meta?.n_ctx === "number" ? m.meta.n_ctx : undefined,
    ),
  );
}
