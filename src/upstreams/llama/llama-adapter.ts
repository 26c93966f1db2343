// The llama-server kind (`"kind": "llama"`): what routing may ask of a llama-server and how.
import type { LlamaTarget } from "../../config/config-schema.ts";
import { upstreamKey } from "../../health/upstream-health.ts";
import type { TargetAdapter } from "../adapter.ts";
import { countLlamaTokens, countTextTokens } from "./count-llama-tokens.ts";
import { LlamaCompletionsUpstream } from "./llama-completions-upstream.ts";
import { fetchLlamaEmbeddings } from "./llama-embeddings.ts";
import { LlamaUpstream } from "./llama-upstream.ts";
import { llamaAuthHeaders } from "./llama-wire.ts";
import { readLlamaProps } from "./read-llama-props.ts";
import { readSlotCount } from "./read-slot-count.ts";
import { loadRouterModel } from "./load-router-model.ts";
import { readRouterPool } from "./read-router-pool.ts";
import type { EnvVars } from "../../config/env-vars.ts";

/** The target's Authorization header alone (for its GET probes), or null when its key secret is missing. */
function authHeaders(t: LlamaTarget, env: EnvVars): Record<string, string> | null {
  try {
    return llamaAuthHeaders(t, t.url, env);
  } catch {
    return null;
  }
}

export const llamaAdapter: TargetAdapter<LlamaTarget> = {
  name: (t) => `llama:${new URL(t.url).host}`,
  capabilities: (t) => ({
    server: {
      key: upstreamKey(t.url),
      url: t.url,
      ...(t.apiKeySecret ? { apiKeySecret: t.apiKeySecret } : {}),
      probe: "llama",
      reportsSlots: true,
      reportsContextWindow: true,
      weight: t.weight ?? 1,
      ...(t.model !== undefined ? { upstreamModel: t.model } : {}),
    },
    identity: upstreamKey(t.url),
    // A continuation is an assistant prefill; in prompt mode its tool grammar would start over.
    continues: { withPromptTools: false },
    retriesSameTarget: true,
    placesByPrompt: false,
    teammateDevice: false,
  }),
  chat: (t) => new LlamaUpstream(t.name, t),
  constrained: (t) => new LlamaUpstream(t.name, { ...t, tools: "prompt" }),
  completions: (t, body) => new LlamaCompletionsUpstream(t.name, t, body),
  embeddings: (t, body, ctx, totalMs) => fetchLlamaEmbeddings(t, t.name, body, ctx, totalMs),
  countPromptTokens: (t, request, ctx) => countLlamaTokens(t, t.name, request, ctx),
  countTextTokens: (t, text, ctx) => countTextTokens(t, t.name, text, ctx),
  async describeModel(t, ctx) {
    const headers = authHeaders(t, ctx.env);
    if (!headers) return null; // its key secret is missing: the chat request will say so
    return readLlamaProps(t.url, headers, ctx.timeoutMs, t.model);
  },
  readSlotCount: (t, env, timeoutMs) => readSlotCount(t, env, timeoutMs),
  async readModelPool(t, env, timeoutMs) {
    const headers = authHeaders(t, env);
    if (!headers) return null;
    const pool = await readRouterPool(t.url, headers, timeoutMs);
    if (!pool) return null;
    return pool.router ? { modelsMax: pool.modelsMax, models: pool.models, ...(pool.slots !== undefined ? { slots: pool.slots } : {}) } : "single";
  },
  async loadPooledModel(t, model, env, timeoutMs) {
    const headers = authHeaders(t, env);
    return headers ? loadRouterModel(t.url, headers, model, timeoutMs) : false;
  },
};
