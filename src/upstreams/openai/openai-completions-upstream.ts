// Legacy text completions (`/v1/completions`) on an OpenAI-compatible server as internal events.
import { ProxyError } from "../../errors/proxy-error.ts";
import type { OpenAiTarget } from "../../config/config-schema.ts";
import type { EventStreamReader } from "../../events/event-source.ts";
import type { CompletionsBody } from "../adapter.ts";
import { completionChunkAsChat } from "../wire/completion-chunk-as-chat.ts";
import { postJson, targetBody } from "../wire/post-json.ts";
import type { AttemptContext, Upstream } from "../upstream.ts";
import { openAiSseEvents } from "./openai-sse-reader.ts";
import { openAiWire } from "./openai-wire.ts";

/**
 * The client's (validated) text-completion body, streamed with usage like chat, its `choices[].text`
 * chunks read as chat deltas (the chat parser's finish, usage and error handling unchanged).
 */
export class OpenAiCompletionsUpstream implements Upstream {
  constructor(
    readonly name: string,
    private readonly target: OpenAiTarget,
    private readonly body: CompletionsBody,
  ) {}

  /** The chat request argument is unused: this upstream serves the text completion it was made for. */
  async open(_chat: unknown, ctx: AttemptContext): Promise<EventStreamReader> {
    const body = targetBody({ ...this.body, stream: true, stream_options: { include_usage: true } }, this.body.model, this.target);
    const res = await postJson(openAiWire, this.target, this.name, "/completions", body, ctx, "text/event-stream");
    const contentType = res.headers.get("content-type") ?? "";
    if (!contentType.includes("text/event-stream")) {
      await res.body.cancel().catch(() => {});
      throw new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${this.name} answered /v1/completions with ${contentType || "no content type"} instead of an event stream.` });
    }
    return openAiSseEvents(res.body, this.name, { path: "/completions", asChat: completionChunkAsChat });
  }
}
