import { ProxyError } from "../../errors/proxy-error.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { LlamaTarget } from "../../schemas/config.ts";
import type { UpstreamEvent } from "../../stream/events.ts";
import type { AttemptContext, Upstream } from "../upstream.ts";
import { buildLlamaBody } from "./build-llama-body.ts";
import { mapLlamaError } from "./map-llama-error.ts";
import { parseLlamaSse } from "./parse-llama-sse.ts";
import { mapLlamaCompletion } from "./map-llama-completion.ts";
import { fetchFresh } from "../../http/fetch-fresh.ts";
import { detectToolMode } from "./detect-tool-mode.ts";
import { parseRetryAfter } from "../../routing/retry-delay.ts";
import { setUpstreamRetryAfter, setUpstreamStatus } from "../../routing/upstream-hints.ts";

/** The chat endpoint of a llama-server base URL (with or without a trailing `/v1`). */
export function chatUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? `${trimmed}/chat/completions` : `${trimmed}/v1/chat/completions`;
}

export class LlamaUpstream implements Upstream {
  constructor(
    readonly name: string,
    private readonly target: LlamaTarget,
  ) {}

  async open(request: ChatRequest, ctx: AttemptContext, stream = true): Promise<ReadableStream<UpstreamEvent>> {
    // Only these headers go upstream: never the client's Authorization, x-api-key or cookies, and not
    // X-Conversation-Id (it makes llama-server keep generating after the client has gone).
    const headers = new Headers({
      "content-type": "application/json",
      accept: "text/event-stream",
      "x-request-id": ctx.requestId,
    });
    if (this.target.apiKeySecret) {
      const key = ctx.env[this.target.apiKeySecret];
      if (typeof key !== "string" || key === "") {
        throw new ProxyError({
          status: 500,
          type: "server_error",
          code: "config_error",
          retryable: true,
          message: `The secret "${this.target.apiKeySecret}" named by ${this.name}'s apiKeySecret is not set. Run \`wrangler secret put ${this.target.apiKeySecret}\` (or add it to .dev.vars).`,
        });
      }
      headers.set("authorization", `Bearer ${key}`);
    }

    // The fetch's signal governs the body too, so the response-start timeout is a timer cleared once
    // headers arrive, not AbortSignal.timeout (which would cut a long stream).
    const abort = new AbortController();
    const onClientAbort = () => abort.abort();
    ctx.signal.addEventListener("abort", onClientAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.abort();
    }, ctx.responseStartMs);
    let res: Response;
    try {
      const toolMode = request.tools?.length ? (this.target.tools ?? (await detectToolMode(this.target.url, authOnly(headers), ctx.responseStartMs))) : "native";
      const body = buildLlamaBody(request, this.target, toolMode);
      if (!stream) {
        body.stream = false;
        delete body.stream_options;
      }
      const init = { method: "POST", headers, body: JSON.stringify(body), signal: abort.signal };
      res = await fetchFresh(chatUrl(this.target.url), init);
    } catch (e) {
      ctx.signal.removeEventListener("abort", onClientAbort);
      if (timedOut && !ctx.signal.aborted) {
        throw new ProxyError({
          status: 504,
          code: "upstream_timeout",
          retryable: true,
          message: `${this.name} sent no response within ${ctx.responseStartMs} ms (timeouts.responseStartMs). It may be busy with other requests or a long prompt.`,
        });
      }
      if (ctx.signal.aborted) throw new ProxyError({ status: 499, code: "client_closed_request", message: "The client closed the request." });
      throw new ProxyError({
        status: 502,
        code: "upstream_unreachable",
        retryable: true,
        message: `Could not reach ${this.name} (${describeFetchError(e)}). Check that llama-server is running and that its URL (${new URL(this.target.url).origin}) is reachable from the Worker.`,
      });
    } finally {
      clearTimeout(timer);
    }

    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => "");
      // Servers from before streamed tool calls (llama.cpp PR #12379) refuse tools with stream:
      // ask again without streaming and replay the answer as events.
      if (stream && res.status === 500 && text.includes("Cannot use tools with stream")) return this.open(request, ctx, false);
      const err = setUpstreamStatus(mapLlamaError(res.status, text, res.headers.get("content-type"), this.name), res.status);
      throw setUpstreamRetryAfter(err, parseRetryAfter(res.headers.get("retry-after"), Date.now()));
    }

    const contentType = res.headers.get("content-type") ?? "";
    if (contentType.includes("application/json")) {
      // One JSON body although a stream was asked for (a buffering proxy in between, or a server
      // that cannot stream this request): replay it as the events a stream would have carried.
      const text = await res.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${this.name} answered with a JSON content type but a body that is not JSON.` });
      }
      return eventsOf(mapLlamaCompletion(body as never, this.name));
    }
    if (!contentType.includes("text/event-stream")) {
      await res.body.cancel().catch(() => {});
      throw new ProxyError({
        status: 502,
        code: "upstream_error",
        retryable: true,
        message: `${this.name} answered with ${contentType || "no content type"} instead of an event stream. Check that the target URL points at llama-server.`,
      });
    }
    return res.body.pipeThrough(parseLlamaSse(this.name));
  }
}

function authOnly(headers: Headers): Headers {
  const auth = headers.get("authorization");
  return new Headers(auth ? { authorization: auth } : {});
}

function eventsOf(events: UpstreamEvent[]): ReadableStream<UpstreamEvent> {
  return new ReadableStream({
    start(controller) {
      for (const e of events) controller.enqueue(e);
      controller.close();
    },
  });
}

function describeFetchError(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  if (/refused|ECONNREFUSED/i.test(msg)) return "connection refused";
  if (/reset/i.test(msg)) return "connection reset";
  if (/dns|resolve|ENOTFOUND/i.test(msg)) return "the host name did not resolve";
  return msg.slice(0, 200);
}
