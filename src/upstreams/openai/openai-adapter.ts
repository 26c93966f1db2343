// The OpenAI-compatible kind (`"kind": "openai"`: vLLM, SGLang, Ollama, LM Studio, TGI, a gateway, a hosted provider): what routing may ask of it and how.
import type { OpenAiTarget } from "../../config/config-schema.ts";
import { upstreamKey } from "../../health/upstream-health.ts";
import type { TargetAdapter } from "../adapter.ts";
import { OpenAiCompletionsUpstream } from "./openai-completions-upstream.ts";
import { fetchOpenAiEmbeddings } from "./openai-embeddings.ts";
import { OpenAiUpstream } from "./openai-upstream.ts";

/**
 * Only the OpenAI endpoints are ever asked (chat, completions, embeddings, and `GET /v1/models` for
 * health): no token counts, no props, no slots, so no countPromptTokens, countTextTokens or
 * describeModel. The server queues inside itself, so admission does not gate it.
 */
export const openaiAdapter: TargetAdapter<OpenAiTarget> = {
  name: (t) => `openai:${new URL(t.url).host}`,
  capabilities: (t) => ({
    server: {
      key: upstreamKey(t.url),
      url: t.url,
      ...(t.apiKeySecret ? { apiKeySecret: t.apiKeySecret } : {}),
      ...(t.headers ? { headers: t.headers } : {}),
      probe: "models",
      reportsSlots: false,
      reportsContextWindow: false,
      weight: t.weight ?? 1,
    },
    identity: upstreamKey(t.url),
    // Only where the operator said how this server continues a trailing assistant message; in prompt
    // mode its response_format would start over.
    continues: t.prefill ? { withPromptTools: false } : null,
    retriesSameTarget: true,
    placesByPrompt: false,
    teammateDevice: false,
  }),
  chat: (t) => new OpenAiUpstream(t.name, t),
  completions: (t, body) => new OpenAiCompletionsUpstream(t.name, t, body),
  embeddings: (t, body, ctx, totalMs) => fetchOpenAiEmbeddings(t, t.name, body, ctx, totalMs),
};
