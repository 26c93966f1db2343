// llama-server's HTTP: its URLs, the headers Switchyard sends it (only its own, and the target's key), and one POST.
import { ProxyError } from "../../errors/proxy-error.ts";
import { rememberSecrets } from "../../errors/redact-secrets.ts";
import type { LlamaTarget } from "../../config/config-schema.ts";
import { secretOf } from "../../config/env-vars.ts";
import type { AttemptContext } from "../upstream.ts";
import { mapLlamaError } from "./map-llama-error.ts";
import { postJson, targetBody, v1Url } from "../wire/post-json.ts";

/** `<base>/v1<path>` for a llama-server base URL given with or without its trailing `/v1`. */
export const llamaUrl = v1Url;

export { targetBody };

/**
 * The headers Switchyard sends a llama-server: only its own, and the target's key. Never the client's
 * Authorization, x-api-key or cookies, and not X-Conversation-Id (it makes llama-server keep
 * generating after the client has gone).
 */
export function llamaHeaders(target: LlamaTarget, name: string, ctx: Pick<AttemptContext, "env" | "requestId" | "clientRequestId" | "traceparent">, accept: string): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", accept, "x-request-id": ctx.requestId };
  if (ctx.clientRequestId) headers["x-client-request-id"] = ctx.clientRequestId;
  if (ctx.traceparent) headers.traceparent = ctx.traceparent;
  if (target.apiKeySecret) {
    const key = secretOf(ctx.env, target.apiKeySecret);
    if (key === undefined) {
      throw new ProxyError({
        status: 500,
        type: "server_error",
        code: "config_error",
        retryable: true,
        message: `The secret "${target.apiKeySecret}" named by ${name}'s apiKeySecret is not set. Run \`wrangler secret put ${target.apiKeySecret}\` (or add it to .dev.vars).`,
      });
    }
    rememberSecrets(ctx.env, [target.apiKeySecret]); // what is sent may come back quoted
    headers.authorization = `Bearer ${key}`;
  }
  return headers;
}

/**
 * POSTs a JSON body to one of llama-server's OpenAI endpoints (chat, completions, embeddings): only
 * `llamaHeaders` go upstream, under the deadlines and error mapping of postJson (mapLlamaError).
 */
export function postLlama(
  target: LlamaTarget,
  name: string,
  path: string,
  body: unknown,
  ctx: AttemptContext,
  accept: string,
): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  return postJson(
    { name, url: llamaUrl(target.url, path), headers: llamaHeaders(target, name, ctx, accept), body, what: "llama-server", mapError: (status, text, type) => mapLlamaError(status, text, type, name) },
    ctx,
  );
}
