// The headers Switchyard sends an OpenAI-compatible server: its own, the target's key and the target's extra headers.
import { ProxyError } from "../../errors/proxy-error.ts";
import { rememberSecrets } from "../../errors/redact-secrets.ts";
import type { OpenAiTarget } from "../../config/config-schema.ts";
import { secretOf, type EnvVars } from "../../config/env-vars.ts";

/**
 * The target's key (`apiKeySecret`, as `Authorization: Bearer`) and extra `headers`, for every request
 * and probe. Never the client's own Authorization, x-api-key or cookies. Both the key and the extra
 * headers' values are remembered as secrets, so an upstream that quotes them back is redacted.
 */
export function openAiAuthHeaders(target: Pick<OpenAiTarget, "apiKeySecret" | "headers">, name: string, env: EnvVars): Record<string, string> {
  const headers: Record<string, string> = { ...target.headers };
  if (target.headers) rememberSecrets(target.headers, Object.keys(target.headers));
  if (target.apiKeySecret) {
    const key = secretOf(env, target.apiKeySecret);
    if (key === undefined) {
      throw new ProxyError({
        status: 500,
        type: "server_error",
        code: "config_error",
        retryable: true,
        message: `The secret "${target.apiKeySecret}" named by ${name}'s apiKeySecret is not set. Run \`wrangler secret put ${target.apiKeySecret}\` (or add it to .dev.vars).`,
      });
    }
    rememberSecrets(env, [target.apiKeySecret]);
    headers.authorization = `Bearer ${key}`;
  }
  return headers;
}

/** A POST's headers: the JSON body, what it accepts, the request id, then openAiAuthHeaders. */
export function openAiHeaders(target: OpenAiTarget, name: string, ctx: { env: EnvVars; requestId: string; clientRequestId?: string; traceparent?: string }, accept: string): Record<string, string> {
  return { ...openAiAuthHeaders(target, name, ctx.env), "content-type": "application/json", accept, "x-request-id": ctx.requestId, ...(ctx.clientRequestId ? { "x-client-request-id": ctx.clientRequestId } : {}), ...(ctx.traceparent ? { traceparent: ctx.traceparent } : {}) };
}
