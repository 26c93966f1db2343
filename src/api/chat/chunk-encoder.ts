// A streamed chat completion: the internal events as OpenAI `chat.completion.chunk` objects.
import type { FinishReason, Timings, TokenLogprob, Usage, UpstreamEvent } from "../../events/events.ts";
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import { errorEnvelope } from "../../errors/error-envelope.ts";
import { randomId } from "../../lib/ids.ts";
import type { SwitchyardExtension } from "../../events/switchyard-extension.ts";
import type { ChatCompletionStreamResponseDelta, ChatCompletionTokenLogprob, CompletionUsage, CreateChatCompletionStreamResponse } from "../wire/openai-wire.ts";

/** A chunk: OpenAI's object (typed by the spec, scripts/gen-wire-types.mjs) and Switchyard's additions. */
type Chunk = CreateChatCompletionStreamResponse & { timings?: Timings; x_switchyard?: SwitchyardExtension };
/** A delta: OpenAI's, and llama.cpp's `reasoning_content` beside `content`. */
type Delta = ChatCompletionStreamResponseDelta & { reasoning_content?: string };

export interface ResponseMeta {
  id: string;
  created: number;
  /** The model name the client asked for: echoed on every chunk. */
  model: string;
  includeUsage: boolean;
  /** The tier that served the request (`service_tier` on every chunk and the body). */
  serviceTier?: "flex" | "default" | "priority";
}

interface PendingCall {
  index: number;
  id: string;
  name: string;
  args: string;
  announced: boolean;
}

type Json = Record<string, unknown>;

/**
 * Internal events → OpenAI `chat.completion.chunk` objects (pure; the caller frames them as SSE).
 * - `role` rides on the first delta; `content` is never null in a text delta;
 * - a tool call is announced once, with a stable `call_…` id and its final name: llama-server may
 *   resend a growing name, which replaces the earlier one, so the announcement waits until the
 *   call's arguments start (or anything else happens);
 * - the finish chunk is held until usage arrives, so llama.cpp's `timings` land on the last chunk;
 * - an error yields one error object and nothing after it: no finish, no `[DONE]`;
 * - with `include_usage`, every chunk but the last carries `"usage": null` (OpenAI's spec says so in
 *   words; typed clients read the field), and `logprobs` carries `refusal: null` beside `content`.
 */
export class ChunkEncoder {
  private roleSent = false;
  private readonly calls = new Map<number, PendingCall>();
  private pendingFinish: FinishReason | null = null;
  private usage: Usage | null = null;
  private timings: Timings | undefined;
  private failedWith: ErrorInfo | null = null;
  private finished = false;
  /** Calls created but not yet announced (a text delta must flush them first). */
  private unannounced = 0;

  constructor(
    private readonly meta: ResponseMeta,
    private readonly extension: () => SwitchyardExtension,
  ) {}

  get failed(): ErrorInfo | null {
    return this.failedWith;
  }

  /**
   * True when a text or reasoning delta would encode to exactly one plain delta chunk (role already
   * sent, no call waiting to be announced, not ended): the SSE encoder may then write it from
   * `deltaPrefix` without building the chunk object.
   */
  get plainDeltaReady(): boolean {
    return this.roleSent && this.unannounced === 0 && this.failedWith === null && !this.finished;
  }

  /** `{"id":…,"object":…,"created":…,"model":…,"choices":[{"index":0,"delta":` — a delta chunk's constant start. */
  deltaPrefix(): string {
    return `${JSON.stringify(this.base()).slice(0, -1)},"choices":[{"index":0,"delta":`;
  }

  /** The client-facing id of tool call `index` (stable for the whole response). */
  callId(index: number): string | undefined {
    return this.calls.get(index)?.id;
  }

  encode(event: UpstreamEvent): Json[] {
    if (this.failedWith || this.finished) return [];
    switch (event.type) {
      case "text":
        return [...this.flushCalls(), this.delta({ content: event.delta }, event.logprobs)];
      case "reasoning":
        return [...this.flushCalls(), this.delta({ reasoning_content: event.delta })];
      case "toolCall":
        return this.toolCall(event);
      case "finish":
        this.pendingFinish = event.reason;
        return this.flushCalls();
      case "usage":
        this.usage = event.usage;
        this.timings = event.timings ?? this.timings;
        return this.pendingFinish ? this.end() : [];
      case "error":
        this.failedWith = event.error;
        return [errorEnvelope(event.error) as unknown as Json];
    }
  }

  /** Everything still held once the upstream is done (the finish and usage chunks). */
  end(): Json[] {
    if (this.failedWith || this.finished) return [];
    const out = this.flushCalls();
    if (this.pendingFinish) {
      this.finished = true;
      const finish: Chunk = {
        ...this.base(),
        choices: [{ index: 0, delta: {}, finish_reason: this.pendingFinish, logprobs: null }],
        x_switchyard: this.extension(),
      };
      if (this.meta.includeUsage && this.usage) {
        out.push(finish, { ...this.base(), usage: usageJson(this.usage), choices: [], ...(this.timings ? { timings: this.timings } : {}) });
      } else {
        if (this.timings) finish.timings = this.timings;
        out.push(finish);
      }
    }
    return out;
  }

  private toolCall(event: Extract<UpstreamEvent, { type: "toolCall" }>): Json[] {
    const out: Json[] = [];
    let call = this.calls.get(event.index);
    if (!call) {
      // A new call: whatever was pending for other calls is final now.
      out.push(...this.flushCalls());
      call = { index: event.index, id: clientCallId(event.id), name: event.name ?? "", args: "", announced: false };
      this.calls.set(event.index, call);
      this.unannounced++;
      call.args += event.argumentsDelta;
      return out;
    }
    if (!call.announced) {
      if (event.name) call.name = event.name;
      call.args += event.argumentsDelta;
      // Arguments flowing without a name means the name is settled.
      if (!event.name && event.argumentsDelta !== "") out.push(this.announce(call));
      return out;
    }
    if (event.argumentsDelta !== "") {
      out.push(this.delta({ tool_calls: [{ index: call.index, function: { arguments: event.argumentsDelta } }] }));
    }
    return out;
  }

  private flushCalls(): Json[] {
    const out: Json[] = [];
    for (const call of this.calls.values()) if (!call.announced) out.push(this.announce(call));
    return out;
  }

  private announce(call: PendingCall): Chunk {
    call.announced = true;
    this.unannounced--;
    return this.delta({
      tool_calls: [{ index: call.index, id: call.id, type: "function", function: { name: call.name, arguments: call.args } }],
    });
  }

  private delta(delta: Delta, logprobs?: TokenLogprob[]): Chunk {
    if (!this.roleSent) {
      this.roleSent = true;
      delta = { role: "assistant", ...delta };
    }
    // llama-server's logprobs entries are passed through as they came: OpenAI's shape already.
    const entries = logprobs ? { content: logprobs as unknown as ChatCompletionTokenLogprob[], refusal: null } : null;
    return { ...this.base(), choices: [{ index: 0, delta, finish_reason: null, logprobs: entries }] };
  }

  /** Every chunk's start; with `include_usage`, `"usage": null` on each but the usage chunk (the spec's words). */
  private base(): Omit<Chunk, "choices"> {
    const base: Omit<Chunk, "choices"> = { id: this.meta.id, object: "chat.completion.chunk", created: this.meta.created, model: this.meta.model, ...(this.meta.serviceTier ? { service_tier: this.meta.serviceTier } : {}) };
    if (this.meta.includeUsage) base.usage = null;
    return base;
  }
}

export function usageJson(u: Usage): CompletionUsage {
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    ...(u.cachedTokens !== undefined ? { prompt_tokens_details: { cached_tokens: u.cachedTokens } } : {}),
  };
}

/** The id a client sees: one the proxy minted (the tool-call rewriter's `call_…`), else a new one. */
export function clientCallId(upstreamId: string | undefined): string {
  return upstreamId?.startsWith("call_") ? upstreamId : randomId("call_");
}
