// POSTs a JSON body to one of an OpenAI-compatible server's endpoints, with its deadlines and its errors as ProxyErrors.
import { ProxyError } from "../../errors/proxy-error.ts";
import { redactKnownSecrets } from "../../errors/redact-secrets.ts";
import type { OpenAiTarget } from "../../config/config-schema.ts";
import { fetchFresh } from "../../http/fetch-fresh.ts";
import { parseRetryAfter } from "../../http/parse-retry-after.ts";
import { llamaUrl } from "../llama/post-llama.ts";
import type { AttemptContext } from "../upstream.ts";
import { setUpstreamRetryAfter, setUpstreamStatus } from "../upstream-hints.ts";
import { openAiHeaders } from "./openai-headers.ts";
import { mapOpenAiError } from "./map-openai-error.ts";

/** `<base>/v1<path>` for a base URL given with or without its trailing `/v1` (llama-server's rule, which is OpenAI's). */
export const openAiUrl = llamaUrl;

/**
 * POSTs `body` to `<url>/v1<path>`: only openAiHeaders go upstream, the response must start within
 * `responseStartMs` (a deadline cancelled once headers arrive, since the fetch's signal governs the
 * body too), the client leaving aborts it, and a non-2xx answer becomes the mapped ProxyError carrying
 * the upstream status and Retry-After for the router (retryable ones let it fail over).
 */
export async function postOpenAi(
  target: OpenAiTarget,
  name: string,
  path: string,
  body: unknown,
  ctx: AttemptContext,
  accept: string,
): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  const headers = openAiHeaders(target, name, ctx, accept);
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
    res = await fetchFresh(openAiUrl(target.url, path), { method: "POST", headers, body: JSON.stringify(body), signal: abort.signal });
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
      message: `Could not reach ${name} (${describeFetchError(e)}). Check that the server is running and that its URL (${new URL(target.url).origin}) is reachable from the Worker.`,
    });
  } finally {
    timer.cancel();
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => "");
    const err = setUpstreamStatus(mapOpenAiError(res.status, text, res.headers.get("content-type"), name, path), res.status);
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
