// The headers Switchyard sends a server that speaks OpenAI's HTTP: its own, never the client's
// Authorization, x-api-key or cookies (nor X-Conversation-Id, which makes llama-server keep
// generating after the client has gone), and the target's key.
import { ProxyError } from "../../errors/proxy-error.ts";
import { rememberSecrets } from "../../errors/redact-secrets.ts";
import { secretOf, type EnvVars } from "../../config/env-vars.ts";

/** What a request's own headers are made of. */
export interface HeaderContext {
  env: EnvVars;
  requestId: string;
  clientRequestId?: string | undefined;
  traceparent?: string | undefined;
}

/** A POST's own headers: its JSON body, what it accepts, the request's id, the client's and the trace's. */
export function postHeaders(ctx: HeaderContext, accept: string): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", accept, "x-request-id": ctx.requestId };
  if (ctx.clientRequestId) headers["x-client-request-id"] = ctx.clientRequestId;
  if (ctx.traceparent) headers.traceparent = ctx.traceparent;
  return headers;
}

/**
 * `Authorization: Bearer` with the key the target's `apiKeySecret` names (none without one), for
 * every request and probe; the key is remembered as a secret, so an upstream that quotes it back is
 * redacted. A secret named but not set is a 500 `config_error` that says how to set it.
 */
export function bearerHeader(apiKeySecret: string | undefined, name: string, env: EnvVars): { authorization?: string } {
  if (!apiKeySecret) return {};
  const key = secretOf(env, apiKeySecret);
  if (key === undefined) {
    throw new ProxyError({
      status: 500,
      type: "server_error",
      code: "config_error",
      retryable: true,
      message: `The secret "${apiKeySecret}" named by ${name}'s apiKeySecret is not set. Run \`wrangler secret put ${apiKeySecret}\` (or add it to .dev.vars).`,
    });
  }
  rememberSecrets(env, [apiKeySecret]); // what is sent may come back quoted
  return { authorization: `Bearer ${key}` };
}
