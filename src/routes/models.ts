import type { Context } from "hono";
import { loadConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import type { AppEnv } from "../app-env.ts";
import { fetchFresh } from "../http/fetch-fresh.ts";

interface ModelEntry {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
}

/** `GET /v1/models`: the declared models, or in zero config the models the llama-server reports. */
export async function listModels(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  if (config.models) {
    const data: ModelEntry[] = Object.keys(config.models).map((id) => ({ id, object: "model", created: 0, owned_by: "switchyard" }));
    return c.json({ object: "list", data });
  }
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
  const data: ModelEntry[] = (body.data ?? [])
    .filter((m): m is { id: string; created?: unknown } => typeof m.id === "string")
    .map((m) => ({ id: m.id, object: "model", created: typeof m.created === "number" ? m.created : 0, owned_by: "llamacpp" }));
  return c.json({ object: "list", data });
}
