// One POST of a JSON body to a server that speaks OpenAI's HTTP API (llama-server, any
// OpenAI-compatible server): its response deadline, the client leaving, and a non-2xx answer mapped
// to a ProxyError carrying the upstream status and Retry-After for the router. Each kind brings its
// headers and error mapping (WireKind); the headers are Switchyard's own (postHeaders: never the
// client's Authorization, x-api-key or cookies, nor X-Conversation-Id, which makes llama-server keep
// generating after the client has gone) and the target's key (bearerHeader).
import { clientClosed, ProxyError } from "../../errors/proxy-error.ts";
import { redactKnownSecrets, rememberSecrets } from "../../errors/redact-secrets.ts";
import { secretOf, type EnvVars } from "../../config/env-vars.ts";
import { fetchFresh } from "../../http/fetch-fresh.ts";
import { parseRetryAfter } from "../../http/parse-retry-after.ts";
import type { AttemptContext } from "../upstream.ts";

/** `<base>/v1<path>` for a base URL given with or without its trailing `/v1`. */
export function v1Url(base: string, path: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return `${trimmed.endsWith("/v1") ? trimmed : `${trimmed}/v1`}${path}`;
}

/** A request body for a target: its `model` override, then its `strip` and `set` edits. */
export function targetBody(body: Record<string, unknown>, model: string, target: { model?: string | undefined; strip?: string[] | undefined; set?: Record<string, unknown> | undefined }): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body, model: target.model ?? model };
  for (const key of target.strip ?? []) delete out[key];
  for (const [key, value] of Object.entries(target.set ?? {})) out[key] = value;
  return out;
}

/** A response whose body is there to read. */
export type WireResponse = Response & { body: ReadableStream<Uint8Array> };

/** What a kind brings to a POST: its headers for a target, its error mapping, its server's name. */
export interface WireKind<T extends { url: string }> {
  /** What to check when the server cannot be reached ("llama-server", "the server"). */
  what: string;
  /** The headers of a POST to `target` (`name` is its client-facing name, for messages). */
  headers(target: T, name: string, ctx: AttemptContext, accept: string): Record<string, string>;
  /** A non-2xx answer of `path` (`/chat/completions`) as the ProxyError the router acts on. */
  mapError(status: number, text: string, contentType: string | null, name: string, path: string): ProxyError;
}

/**
 * POSTs `body` to `<target.url>/v1<path>` with `kind`'s headers: the response must start within
 * `responseStartMs` (a deadline cancelled once headers arrive — the fetch's signal governs the body
 * too, so AbortSignal.timeout would cut a long stream), the client leaving aborts it, and a non-2xx
 * answer becomes `kind.mapError`'s ProxyError with the upstream status and Retry-After attached
 * (retryable ones let the router fail over).
 */
export async function postJson<T extends { url: string }>(kind: WireKind<T>, target: T, name: string, path: string, body: unknown, ctx: AttemptContext, accept: string): Promise<WireResponse> {
  const url = v1Url(target.url, path);
  const headers = kind.headers(target, name, ctx, accept);
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
    res = await fetchFresh(url, { method: "POST", headers, body: JSON.stringify(body), signal: abort.signal });
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
    if (ctx.signal.aborted) throw clientClosed();
    throw new ProxyError({
      status: 502,
      code: "upstream_unreachable",
      retryable: true,
      message: `Could not reach ${name} (${describeFetchError(e)}). Check that ${kind.what} is running and that its URL (${new URL(url).origin}) is reachable from the Worker.`,
    });
  } finally {
    timer.cancel();
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => "");
    const err = kind.mapError(res.status, text, res.headers.get("content-type"), name, path);
    err.upstreamStatus = res.status;
    const retryAfterMs = parseRetryAfter(res.headers.get("retry-after"), Date.now());
    if (retryAfterMs !== undefined) err.upstreamRetryAfterMs = retryAfterMs;
    throw err;
  }
  return res as WireResponse;
}

function describeFetchError(e: unknown): string {
  const msg = redactKnownSecrets(e instanceof Error ? e.message : String(e));
  if (/refused|ECONNREFUSED/i.test(msg)) return "connection refused";
  if (/reset/i.test(msg)) return "connection reset";
  if (/dns|resolve|ENOTFOUND/i.test(msg)) return "the host name did not resolve";
  return msg.slice(0, 200);
}

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
