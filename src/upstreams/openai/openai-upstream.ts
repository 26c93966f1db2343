// Chat completions on an OpenAI-compatible server as internal events.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { OpenAiTarget } from "../../config/config-schema.ts";
import type { UpstreamEvent } from "../../events/events.ts";
import type { EventStreamReader } from "../../events/event-source.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { AttemptContext, Upstream } from "../upstream.ts";
import { buildOpenAiBody, prefillOf } from "./build-openai-body.ts";
import { mapOpenAiCompletion } from "./map-openai-completion.ts";
import { openAiSseEvents } from "./openai-sse-reader.ts";
import { PrefillEcho } from "./prefill-echo.ts";
import { postOpenAi } from "./post-openai.ts";

export class OpenAiUpstream implements Upstream {
  constructor(
    readonly name: string,
    private readonly target: OpenAiTarget,
  ) {}

  async open(request: ChatRequest, ctx: AttemptContext): Promise<EventStreamReader> {
    const prefill = prefillOf(request, this.target);
    const res = await postOpenAi(this.target, this.name, "/chat/completions", buildOpenAiBody(request, this.target), ctx, "text/event-stream");
    const contentType = res.headers.get("content-type") ?? "";
    if (contentType.includes("application/json")) {
      // One JSON body although a stream was asked for (a buffering gateway, a server that cannot
      // stream this request): replay it as the events a stream would have carried.
      let body: unknown;
      try {
        body = JSON.parse(await res.text());
      } catch {
        throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${this.name} answered with a JSON content type but a body that is not JSON.` });
      }
      let events = mapOpenAiCompletion((body ?? {}) as never, this.name);
      if (prefill !== undefined) {
        const echo = new PrefillEcho(prefill);
        events = [...events.flatMap((e) => echo.push(e)), ...echo.end()];
      }
      return eventsOf(events);
    }
    if (!contentType.includes("text/event-stream")) {
      await res.body.cancel().catch(() => {});
      throw new ProxyError({
        status: 502,
        code: "upstream_error",
        retryable: true,
        message: `${this.name} answered with ${contentType || "no content type"} instead of an event stream. Check that the target URL points at an OpenAI-compatible server.`,
      });
    }
    return openAiSseEvents(res.body, this.name, { path: "/chat/completions", ...(prefill !== undefined ? { prefill } : {}) });
  }
}

/** Events already known, read one at a time. */
export function eventsOf(events: UpstreamEvent[]): EventStreamReader {
  let next = 0;
  return {
    read: async () => (next < events.length ? { done: false, value: events[next++]! } : { done: true, value: undefined }),
    cancel: async () => {
      next = events.length;
    },
  };
}
