// A non-stream chat completion: the internal events gathered into one `chat.completion` body.
import type { FinishReason, Timings, TokenLogprob, Usage, UpstreamEvent } from "../../events/events.ts";
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import { clientCallId, usageJson, type ResponseMeta } from "./chunk-encoder.ts";
import type { SwitchyardExtension } from "../../events/switchyard-extension.ts";
import type { ChatCompletionResponseMessage, ChatCompletionTokenLogprob, CreateChatCompletionResponse } from "../wire/openai-wire.ts";

/** The body: OpenAI's object (typed by the spec, scripts/gen-wire-types.mjs) and Switchyard's additions. */
export type ChatCompletionBody = CreateChatCompletionResponse & { timings?: Timings; x_switchyard: SwitchyardExtension };

type Json = Record<string, unknown>;

/** Internal events → one `chat.completion` body (pure): the non-stream answer is the stream, gathered. */
export class CompletionAggregator {
  private content = "";
  /** The content tokens' logprobs entries, when the upstream sent any (the client asked). */
  private logprobs: TokenLogprob[] | null = null;
  private reasoning = "";
  private readonly calls = new Map<number, { id: string; name: string; args: string }>();
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;
  private timings: Timings | undefined;
  private error: ErrorInfo | null = null;

  push(event: UpstreamEvent): void {
    if (this.error) return;
    switch (event.type) {
      case "text":
        this.content += event.delta;
        if (event.logprobs) (this.logprobs ??= []).push(...event.logprobs);
        break;
      case "reasoning":
        this.reasoning += event.delta;
        break;
      case "toolCall": {
        let call = this.calls.get(event.index);
        if (!call) {
          call = { id: clientCallId(event.id), name: "", args: "" };
          this.calls.set(event.index, call);
        }
        if (event.name) call.name = event.name; // a resent name replaces, never appends
        call.args += event.argumentsDelta;
        break;
      }
      case "finish":
        this.finish = event.reason;
        break;
      case "usage":
        this.usage = event.usage;
        this.timings = event.timings ?? this.timings;
        break;
      case "error":
        this.error = event.error;
        break;
    }
  }

  get failed(): ErrorInfo | null {
    return this.error;
  }

  callId(index: number): string | undefined {
    return this.calls.get(index)?.id;
  }

  /** The body; call only when not failed and the upstream is done. */
  result(meta: ResponseMeta, extension: () => SwitchyardExtension): ChatCompletionBody {
    const toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.args } }));
    const message: ChatCompletionResponseMessage & { reasoning_content?: string } = {
      role: "assistant",
      content: toolCalls.length && this.content === "" ? null : this.content,
      refusal: null,
      ...(this.reasoning ? { reasoning_content: this.reasoning } : {}),
      ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
    };
    return {
      id: meta.id,
      object: "chat.completion",
      created: meta.created,
      model: meta.model,
      ...(meta.serviceTier ? { service_tier: meta.serviceTier } : {}),
      // llama-server's logprobs entries are passed through as they came: OpenAI's shape already.
      choices: [{ index: 0, message, finish_reason: this.finish ?? "stop", logprobs: this.logprobs ? { content: this.logprobs as unknown as ChatCompletionTokenLogprob[], refusal: null } : null }],
      usage: usageJson(this.usage ?? { promptTokens: 0, completionTokens: 0 }),
      ...(this.timings ? { timings: this.timings } : {}),
      x_switchyard: extension(),
    };
  }
}
