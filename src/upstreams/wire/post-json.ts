// One POST of a JSON body to a server that speaks OpenAI's HTTP API (llama-server, any
// OpenAI-compatible server): its response deadline, the client leaving, and a non-2xx answer mapped
// to a ProxyError carrying the upstream status and Retry-After for the router. Each kind brings its
// URL, headers and error mapping.
import { ProxyError } from "../../errors/proxy-error.ts";
import { redactKnownSecrets } from "../../errors/redact-secrets.ts";
import { fetchFresh } from "../../http/fetch-fresh.ts";
import { parseRetryAfter } from "../../http/parse-retry-after.ts";
import type { AttemptContext } from "../upstream.ts";
import { setUpstreamRetryAfter, setUpstreamStatus } from "../upstream-hints.ts";

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

export interface JsonPost {
  /** The target's client-facing name, for messages. */
  name: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** What to check when the server cannot be reached ("llama-server", "the server"). */
  what: string;
  /** A non-2xx answer as the ProxyError the router acts on. */
  mapError(status: number, text: string, contentType: string | null): ProxyError;
}

/**
 * POSTs `post.body`: the response must start within `responseStartMs` (a deadline cancelled once
 * headers arrive — the fetch's signal governs the body too, so AbortSignal.timeout would cut a long
 * stream), the client leaving aborts it, and a non-2xx answer becomes `mapError`'s ProxyError with the
 * upstream status and Retry-After attached (retryable ones let the router fail over).
 */
export async function postJson(post: JsonPost, ctx: AttemptContext): Promise<Response & { body: ReadableStream<Uint8Array> }> {
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
    res = await fetchFresh(post.url, { method: "POST", headers: post.headers, body: JSON.stringify(post.body), signal: abort.signal });
  } catch (e) {
    ctx.signal.removeEventListener("abort", onClientAbort);
    if (timedOut && !ctx.signal.aborted) {
      throw new ProxyError({
        status: 504,
        code: "upstream_timeout",
        retryable: true,
        message: `${post.name} sent no response within ${ctx.responseStartMs} ms (timeouts.responseStartMs). It may be busy with other requests or a long prompt.`,
      });
    }
    if (ctx.signal.aborted) throw new ProxyError({ status: 499, code: "client_closed_request", message: "The client closed the request." });
    throw new ProxyError({
      status: 502,
      code: "upstream_unreachable",
      retryable: true,
      message: `Could not reach ${post.name} (${describeFetchError(e)}). Check that ${post.what} is running and that its URL (${new URL(post.url).origin}) is reachable from the Worker.`,
    });
  } finally {
    timer.cancel();
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => "");
    const err = setUpstreamStatus(post.mapError(res.status, text, res.headers.get("content-type")), res.status);
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
