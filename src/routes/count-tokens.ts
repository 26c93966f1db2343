// POST /v1/messages/count_tokens: Anthropic's token count of a Messages request, asked of the model's
// first target, with every error in Anthropic's shape.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { anthropicErrorResponse, convertMessagesRequest, estimateTokens, validateCountTokens } from "../api/messages/index.ts";
import { loadConfig } from "../config/load-config.ts";
import { toProxyError } from "../errors/error-envelope.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { planTargets } from "../routing/plan-targets.ts";
import { adapterOf } from "../upstreams/registry/adapters.ts";

/**
 * `POST /v1/messages/count_tokens`: `{input_tokens}` for the request as `/v1/messages` would send it,
 * counted by the model's first target when it can count (a llama-server). Another target, or a server
 * that cannot count now (unreachable, loading, failing), gives an estimate (`estimateTokens`) marked
 * by `x-switchyard-estimate: 1`; a request the server refuses is an Anthropic error.
 */
export async function countTokens(c: Context<AppEnv>): Promise<Response> {
  const requestId = c.get("requestId");
  try {
    const config = loadConfig(c.env);
    const request = validateCountTokens(await readJsonBody(c.req.raw, config.limits.maxBodyBytes));
    c.get("meter")?.checkModel(request.model);
    const chat = convertMessagesRequest(request);
    const target = planTargets(config, request.model)[0]!;
    const count = adapterOf(target).countPromptTokens;
    if (count) {
      try {
        const ctx = { env: c.env, requestId, timeoutMs: config.timeouts.responseStartMs, signal: c.req.raw.signal };
        const n = await count(target, chat, ctx);
        return c.json({ input_tokens: n }, 200, { "x-switchyard-target": target.name });
      } catch (e) {
        if (!(e instanceof ProxyError) || !(e.retryable || e.status >= 500)) throw e;
      }
    }
    return c.json({ input_tokens: estimateTokens(chat) }, 200, { "x-switchyard-target": target.name, "x-switchyard-estimate": "1" });
  } catch (e) {
    return anthropicErrorResponse(toProxyError(e), { "x-request-id": requestId });
  }
}
