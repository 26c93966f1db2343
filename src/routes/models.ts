import type { Context } from "hono";
import { loadConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { AppEnv } from "../app-env.ts";
import { fetchFresh } from "../http/fetch-fresh.ts";
import { sessionHub } from "../upstreams/browser/browser-upstream.ts";

interface ModelEntry {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
}

/**
 * `GET /v1/models`: the declared models, or in zero config the models the llama-server reports plus
 * those of connected browser sessions (each is served with the session as a fallback). A llama-server
 * that cannot be reached is an error only when no session serves anything either.
 */
export async function listModels(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  if (config.models) return c.json({ object: "list", data: declaredModels(config.models) });
  const [upstream, browser] = await Promise.all([
    upstreamModels(config.llamaUrl, config.timeouts.responseStartMs).then(
      (data) => ({ ok: true as const, data }),
      (error: unknown) => ({ ok: false as const, error }),
    ),
    browserModels(c.env as unknown as Record<string, unknown>),
  ]);
  if (!upstream.ok && browser.length === 0) throw upstream.error;
  const data = upstream.ok ? [...upstream.data] : [];
  for (const m of browser) if (!data.some((d) => d.id === m.id)) data.push(m);
  return c.json({ object: "list", data });
}

async function browserModels(env: Record<string, unknown>): Promise<ModelEntry[]> {
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
  const config = loadConfig(c.env);
  const id = c.req.param("id") ?? "";
  if (config.models) {
    const entry = declaredModels(config.models).find((m) => m.id === id);
    if (!entry) {
      throw new ProxyError({ status: 404, code: "model_not_found", param: "model", message: `The model "${id}" does not exist here. GET /v1/models lists the available ones.` });
    }
    return c.json(entry);
  }
  const listed = (await upstreamModels(config.llamaUrl, config.timeouts.responseStartMs)).find((m) => m.id === id);
  return c.json(listed ?? { id, object: "model", created: 0, owned_by: "llamacpp" });
}

function declaredModels(models: Record<string, unknown>): ModelEntry[] {
  return Object.keys(models).map((id) => ({ id, object: "model", created: 0, owned_by: "switchyard" }));
}

async function upstreamModels(llamaUrl: string, responseStartMs: number): Promise<ModelEntry[]> {
  const config = { llamaUrl, timeouts: { responseStartMs } };
  const base = config.llamaUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
  let res: Response;
  try {
    res = await fetchFresh(`${base}/v1/models`, { signal: AbortSignal.timeout(config.timeouts.responseStartMs) });
  } catch {
    throw new ProxyError({
      status: 502,
      code: "upstream_unreachable",
      message: `Could not reach the llama-server at ${new URL(config.llamaUrl).origin} to list its models. Check that it is running and LLAMA_URL is right.`,
    });
  }
  if (!res.ok) {
    throw new ProxyError({ status: 502, code: "upstream_error", message: `The llama-server at ${new URL(config.llamaUrl).origin} answered HTTP ${res.status} to /v1/models.` });
  }
  const body = (await res.json().catch(() => ({}))) as { data?: Array<{ id?: unknown; created?: unknown }> };
  return (body.data ?? [])
    .filter((m): m is { id: string; created?: unknown } => typeof m.id === "string")
    .map((m) => ({ id: m.id, object: "model", created: typeof m.created === "number" ? m.created : 0, owned_by: "llamacpp" }));
}
