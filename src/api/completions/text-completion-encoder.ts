// The /v1/completions answer: the internal events as OpenAI `text_completion` chunks or one body.
import { errorEnvelope } from "../../errors/error-envelope.ts";
import type { FinishReason, Timings, TokenLogprob, Usage, UpstreamEvent } from "../../events/events.ts";
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import { usageJson } from "../chat/index.ts";
import type { SwitchyardExtension } from "../../events/switchyard-extension.ts";
import { appendLegacyLogprobs, emptyLegacyLogprobs, type LegacyLogprobs } from "./legacy-logprobs.ts";
import type { CreateCompletionResponse } from "../wire/openai-wire.ts";

/** The body: OpenAI's object (typed by the spec, scripts/gen-wire-types.mjs) and Switchyard's additions. */
type CompletionBody = CreateCompletionResponse & { timings?: Timings; x_switchyard: SwitchyardExtension };

type Json = Record<string, unknown>;

export interface TextCompletionMeta {
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
  /** The request's `logprobs` (the legacy integer N): chunks and the body carry the tokens' logprobs in the legacy shape, with N alternatives each. */
  logprobs?: number | null;
}

/**
 * Internal events → OpenAI `text_completion` objects (pure): one chunk per text delta, the finish
 * held until usage (so llama.cpp's `timings` ride on it), a `choices: []` usage chunk when asked,
 * and one error envelope on failure with nothing after it. The non-stream body is the same, gathered.
 * With `logprobs`, a chunk's tokens ride on it in OpenAI's legacy shape (null on chunks without
 * tokens), and the body carries all of them.
 */
export class TextCompletionEncoder {
  private text = "";
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;
  private timings: Timings | undefined;
  private failedWith: ErrorInfo | null = null;
  private ended = false;
  /** Every token's entry so far (with `logprobs`), and the character offset after the last one. */
  private readonly logprobs: LegacyLogprobs | null;
  private offset = 0;

  constructor(
    private readonly meta: TextCompletionMeta,
    private readonly extension: () => SwitchyardExtension,
  ) {
    this.logprobs = meta.logprobs != null ? emptyLegacyLogprobs() : null;
  }

  get failed(): ErrorInfo | null {
    return this.failedWith;
  }

  encode(event: UpstreamEvent): Json[] {
    if (this.failedWith || this.ended) return [];
    switch (event.type) {
      case "text":
        this.text += event.delta;
        return [this.chunk(event.delta, null, this.logprobs && event.logprobs ? this.take(event.logprobs) : null)];
      case "finish":
        this.finish = event.reason;
        return [];
      case "usage":
        this.usage = event.usage;
        this.timings = event.timings ?? this.timings;
        return [];
      case "error":
        this.failedWith = event.error;
        return [errorEnvelope(event.error) as unknown as Json];
      default:
        return []; // a text completion has no reasoning or tool calls
    }
  }

  end(): Json[] {
    if (this.failedWith || this.ended) return [];
    this.ended = true;
    const finish: Json = { ...this.chunk("", completionFinish(this.finish)), x_switchyard: this.extension() };
    if (this.timings) finish.timings = this.timings;
    const out = [finish];
    if (this.meta.includeUsage) out.push({ ...this.base(), choices: [], usage: usageJson(this.usage ?? { promptTokens: 0, completionTokens: 0 }) });
    return out;
  }

  /** The non-stream body; call after `end()`. */
  completion(): CompletionBody {
    return {
      ...this.base(),
      choices: [{ text: this.text, index: 0, logprobs: this.logprobs, finish_reason: completionFinish(this.finish) }],
      usage: usageJson(this.usage ?? { promptTokens: 0, completionTokens: 0 }),
      ...(this.timings ? { timings: this.timings } : {}),
      x_switchyard: this.extension(),
    };
  }

  private chunk(text: string, finish: CompletionFinish | null, logprobs: LegacyLogprobs | null = null): Json {
    return { ...this.base(), choices: [{ text, index: 0, logprobs, finish_reason: finish }] };
  }

  /** One text event's entries in the legacy shape, also kept for the body. */
  private take(entries: TokenLogprob[]): LegacyLogprobs {
    const chunk = emptyLegacyLogprobs();
    this.offset = appendLegacyLogprobs(chunk, entries, this.offset, this.meta.logprobs ?? 0);
    const all = this.logprobs!;
    all.tokens.push(...chunk.tokens);
    all.token_logprobs.push(...chunk.token_logprobs);
    all.top_logprobs.push(...chunk.top_logprobs);
    all.text_offset.push(...chunk.text_offset);
    return chunk;
  }

  private base(): Omit<CreateCompletionResponse, "choices"> {
    return { id: this.meta.id, object: "text_completion", created: this.meta.created, model: this.meta.model };
  }
}

type CompletionFinish = CreateCompletionResponse["choices"][number]["finish_reason"];

/** A text completion has no tool calls: an answer that ended on one (a rewritten call) just stopped. */
function completionFinish(reason: FinishReason | null): CompletionFinish {
  return reason === null || reason === "tool_calls" ? "stop" : reason;
}
