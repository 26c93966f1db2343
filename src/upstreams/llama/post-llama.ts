import { ProxyError } from "../../errors/proxy-error.ts";
import { fetchFresh } from "../../http/fetch-fresh.ts";
import { redactKnownSecrets, rememberSecrets } from "../../errors/redact-secrets.ts";
import type { LlamaTarget } from "../../config/config-schema.ts";
import { secretOf } from "../../config/env-vars.ts";
import type { AttemptContext } from "../upstream.ts";
import { mapLlamaError } from "./map-llama-error.ts";
import { parseRetryAfter } from "../../http/parse-retry-after.ts";
import { setUpstreamRetryAfter, setUpstreamStatus } from "../upstream-hints.ts";

/** `<base>/v1<path>` for a llama-server base URL given with or without its trailing `/v1`. */
export function llamaUrl(base: string, path: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return `${trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`}${path}`;
}

/** A request body for a target: its `model` override, then its `strip` and `set` edits. */
export function targetBody(body: Record<string, unknown>, model: string, target: Pick<LlamaTarget, "model" | "strip" | "set">): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body, model: target.model ?? model };
  for (const key of target.strip ?? []) delete out[key];
  for (const [key, value] of Object.entries(target.set ?? {})) out[key] = value;
  return out;
}

/**
 * The headers Switchyard sends a llama-server: only its own, and the target's key. Never the client's
 * Authorization, x-api-key or cookies, and not X-Conversation-Id (it makes llama-server keep
 * generating after the client has gone).
 */
export function llamaHeaders(target: LlamaTarget, name: string, ctx: Pick<AttemptContext, "env" | "requestId">, accept: string): Record<string, string> {
  const headers: Record<string, string> = { "content-type": "application/json", accept, "x-request-id": ctx.requestId };
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
 * `llamaHeaders` go upstream, the response must start within `responseStartMs` (a deadline cancelled once
 * headers arrive — the fetch's signal governs the body too, so AbortSignal.timeout would cut a long
 * stream), the client leaving aborts it, and a non-2xx answer becomes the mapped ProxyError carrying
 * the upstream status and Retry-After for the router (retryable ones let it fail over).
 */
export async function postLlama(
  target: LlamaTarget,
  name: string,
  path: string,
  body: unknown,
  ctx: AttemptContext,
  accept: string,
): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  const headers = llamaHeaders(target, name, ctx, accept);
  const abort = new AbortController();
  const onClientAbort = () => abort.abort();
  ctx.signal.addEventListener("abort", onClientAbort, { once: true });
  let timedOut = false;
  const timer = ctx.deadlines.after(ctx.responseStartMs, () => {
    timedOut = true;
    abort.abort();
  });
  let res: Response;
  try {
    res = await fetchFresh(llamaUrl(target.url, path), { method: "POST", headers, body: JSON.stringify(body), signal: abort.signal });
  } catch (e) {
    ctx.signal.removeEventListener("abort", onClientAbort);
    if (timedOut && !ctx.signal.aborted) {
      throw new ProxyError({
        status: 504,
        code: "upstream_timeout",
        retryable: true,
        message: `${name} sent no response within ${ctx.responseStartMs} ms (timeouts.responseStartMs). It may be busy with other requests or a long prompt.`,
      });
    }
    if (ctx.signal.aborted) throw new ProxyError({ status: 499, code: "client_closed_request", message: "The client closed the request." });
    throw new ProxyError({
      status: 502,
      code: "upstream_unreachable",
      retryable: true,
      message: `Could not reach ${name} (${describeFetchError(e)}). Check that llama-server is running and that its URL (${new URL(target.url).origin}) is reachable from the Worker.`,
    });
  } finally {
    timer.cancel();
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => "");
    const err = setUpstreamStatus(mapLlamaError(res.status, text, res.headers.get("content-type"), name), res.status);
    throw setUpstreamRetryAfter(err, parseRetryAfter(res.headers.get("retry-after"), Date.now()));
  }
  return res as Response & { body: ReadableStream<Uint8Array> };
}

function describeFetchError(e: unknown): string {
  const msg = redactKnownSecrets(e instanceof Error ? e.message : String(e));
  if (/refused|ECONNREFUSED/i.test(msg)) return "connection refused";
  if (/reset/i.test(msg)) return "connection reset";
  if (/dns|resolve|ENOTFOUND/i.test(msg)) return "the host name did not resolve";
  return msg.slice(0, 200);
}
