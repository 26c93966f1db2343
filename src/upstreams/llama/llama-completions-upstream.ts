// Legacy text completions (`/v1/completions`) on llama-server as internal events.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { LlamaTarget } from "../../config/config-schema.ts";
import type { EventStreamReader } from "../../events/event-source.ts";
import type { AttemptContext, Upstream } from "../upstream.ts";
import { completionChunkAsChat } from "../wire/completion-chunk-as-chat.ts";
import { postJson, targetBody } from "../wire/post-json.ts";
import { llamaSseEvents } from "./parse-llama-sse.ts";
import { llamaWire } from "./llama-wire.ts";

/**
 * `/v1/completions` on llama-server as internal events. The body is the client's (validated) text
 * completion request; it always streams with usage, like chat, and is parsed by the chat parser.
 */
export class LlamaCompletionsUpstream implements Upstream {
  constructor(
    readonly name: string,
    private readonly target: LlamaTarget,
    private readonly body: Record<string, unknown> & { model: string },
  ) {}

  /** The chat request argument is unused: this upstream serves the text completion it was made for. */
  async open(_chat: unknown, ctx: AttemptContext): Promise<EventStreamReader> {
    const body = targetBody({ ...this.body, stream: true, stream_options: { include_usage: true } }, this.body.model, this.target);
    // llama-server reads `logprobs: 0` as "none"; OpenAI as "the tokens' own, no alternatives" (the
    // encoder keeps none of the one asked for here).
    if (body.logprobs === 0) body.logprobs = 1;
    return completionEvents(this.target, this.name, body, ctx);
  }
}

/** A streamed `/v1/completions` request to llama-server, its text chunks read as chat events. */
export async function completionEvents(target: LlamaTarget, name: string, body: Record<string, unknown>, ctx: AttemptContext): Promise<EventStreamReader> {
  const res = await postJson(llamaWire, target, name, "/completions", body, ctx, "text/event-stream");
  const contentType = res.headers.get("content-type") ?? "";
  if (!contentType.includes("text/event-stream")) {
    await res.body.cancel().catch(() => {});
    throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${name} answered /v1/completions with ${contentType || "no content type"} instead of an event stream.` });
  }
  return llamaSseEvents(res.body, name, completionChunkAsChat);
}
