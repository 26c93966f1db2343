// Chat completions on an OpenAI-compatible server as internal events.
import type { OpenAiTarget } from "../../config/config-schema.ts";
import type { EventStreamReader } from "../../events/event-source.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { AttemptContext, Upstream } from "../upstream.ts";
import { chatAnswerEvents } from "../wire/chat-answer.ts";
import { postJson } from "../wire/post-json.ts";
import { buildOpenAiBody, prefillOf } from "./build-openai-body.ts";
import { mapOpenAiCompletion } from "./map-openai-completion.ts";
import { openAiSseEvents } from "./openai-sse-reader.ts";
import { PrefillEcho } from "./prefill-echo.ts";
import { openAiWire } from "./openai-wire.ts";

export class OpenAiUpstream implements Upstream {
  constructor(
    readonly name: string,
    private readonly target: OpenAiTarget,
  ) {}

  async open(request: ChatRequest, ctx: AttemptContext): Promise<EventStreamReader> {
    const prefill = prefillOf(request, this.target);
    const res = await postJson(openAiWire, this.target, this.name, "/chat/completions", buildOpenAiBody(request, this.target), ctx, "text/event-stream");
    return chatAnswerEvents(res, this.name, "an OpenAI-compatible server", {
      stream: (body) => openAiSseEvents(body, this.name, { path: "/chat/completions", ...(prefill !== undefined ? { prefill } : {}) }),
      whole: (body) => {
        const events = mapOpenAiCompletion(body, this.name);
        if (prefill === undefined) return events;
        const echo = new PrefillEcho(prefill);
        return [...events.flatMap((e) => echo.push(e)), ...echo.end()];
      },
    });
  }
}
