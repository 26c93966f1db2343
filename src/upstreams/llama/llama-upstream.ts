// Chat completions on llama-server as internal events, asking again in a form the server takes
// when it refuses a known way (tools with stream, late system messages).
import { ProxyError } from "../../errors/proxy-error.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { LlamaTarget } from "../../config/config-schema.ts";
import type { EventStreamReader } from "../../events/event-source.ts";
import type { AttemptContext, RawTextUpstream, Upstream } from "../upstream.ts";
import { LlamaRawUpstream } from "./llama-raw-upstream.ts";
import { buildLlamaBody } from "./build-llama-body.ts";
import { llamaSseEvents } from "./parse-llama-sse.ts";
import { mapLlamaCompletion } from "./map-llama-completion.ts";
import { chatAnswerEvents } from "../wire/chat-answer.ts";
import { postJson } from "../wire/post-json.ts";
import { detectToolMode } from "./detect-tool-mode.ts";
import { llamaAuthHeaders, llamaWire } from "./llama-wire.ts";
import { foldSystemMessages, hasLateSystemMessage, isTemplateRefusal } from "./fold-system-messages.ts";

export class LlamaUpstream implements Upstream {
  /** The body the chat endpoint accepted last (the late system messages folded in, if they had to be). */
  private sent: Record<string, unknown> | undefined;

  constructor(
    readonly name: string,
    private readonly target: LlamaTarget,
  ) {}

  withoutChatParser(): RawTextUpstream | undefined {
    if (!this.sent) return undefined;
    // A prefilled assistant message is echoed by the chat endpoint and not by a raw completion: such
    // an answer would not read the same, so it is left to the chat endpoint.
    const messages = this.sent.messages as Array<{ role?: unknown }> | undefined;
    if (messages?.at(-1)?.role === "assistant") return undefined;
    return new LlamaRawUpstream(this.name, this.target, this.sent);
  }

  async open(request: ChatRequest, ctx: AttemptContext, stream = true): Promise<EventStreamReader> {
    const toolMode = request.tools?.length
      ? (this.target.tools ?? (await detectToolMode(this.target.url, llamaAuthHeaders(this.target, this.name, ctx.env), ctx.responseStartMs)))
      : "native";
    const body = buildLlamaBody(request, this.target, toolMode);
    // A seed of its own (llama-server would draw one anyway): should the chat parser refuse the
    // answer midway, the raw text of the same request with it is the same answer (withoutChatParser).
    if (body.seed == null && !this.target.strip?.includes("seed")) body.seed = crypto.getRandomValues(new Uint32Array(1))[0]! >>> 1;
    // llama-server refuses logprobs with tools on a stream ("logprobs is not supported with tools +
    // stream", 400) but answers them whole: ask for the whole answer and replay it as events.
    if (stream && Array.isArray(body.tools) && body.tools.length > 0 && body.logprobs === true) stream = false;
    if (!stream) {
      body.stream = false;
      delete body.stream_options;
    }
    let res: Response & { body: ReadableStream<Uint8Array> };
    try {
      res = await postJson(llamaWire, this.target, this.name, "/chat/completions", body, ctx, "text/event-stream");
    } catch (e) {
      // Not answered whole: the server generated it, so this body reached it (see withoutChatParser).
      if (e instanceof ProxyError && e.unparsed) this.sent = body;
      // Servers from before streamed tool calls (llama.cpp PR #12379) refuse tools with stream:
      // ask again without streaming and replay the answer as events.
      if (stream && e instanceof ProxyError && e.message.includes("Cannot use tools with stream")) return this.open(request, ctx, false);
      // A template that allows a system message only first: ask again with the late ones folded in.
      if (e instanceof ProxyError && e.status === 400 && isTemplateRefusal(e.message) && hasLateSystemMessage(request.messages)) {
        return this.open({ ...request, messages: foldSystemMessages(request.messages) }, ctx, stream);
      }
      throw e;
    }

    this.sent = body;
    return chatAnswerEvents(res, this.name, "llama-server", { stream: (body) => llamaSseEvents(body, this.name), whole: (body) => mapLlamaCompletion(body, this.name) });
  }
}
