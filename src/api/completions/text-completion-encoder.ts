import { errorEnvelope } from "../../errors/error-envelope.ts";
import type { ErrorInfo, FinishReason, Timings, Usage, UpstreamEvent } from "../../stream/events.ts";
import { usageJson } from "../../stream/chunk-encoder.ts";
import type { SwitchyardExtension } from "../../stream/switchyard-extension.ts";

type Json = Record<string, unknown>;

export interface TextCompletionMeta {
  id: string;
  created: number;
  model: string;
  includeUsage: boolean;
}

/**
 * Internal events → OpenAI `text_completion` objects (pure): one chunk per text delta, the finish
 * held until usage (so llama.cpp's `timings` ride on it), a `choices: []` usage chunk when asked,
 * and one error envelope on failure with nothing after it. The non-stream body is the same, gathered.
 */
export class TextCompletionEncoder {
  private text = "";
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;
  private timings: Timings | undefined;
  private failedWith: ErrorInfo | null = null;
  private ended = false;

  constructor(
    private readonly meta: TextCompletionMeta,
    private readonly extension: () => SwitchyardExtension,
  ) {}

  get failed(): ErrorInfo | null {
    return this.failedWith;
  }

  encode(event: UpstreamEvent): Json[] {
    if (this.failedWith || this.ended) return [];
    switch (event.type) {
      case "text":
        this.text += event.delta;
        return [this.chunk(event.delta, null)];
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
    const finish: Json = { ...this.chunk("", this.finish ?? "stop"), x_switchyard: this.extension() };
    if (this.timings) finish.timings = this.timings;
    const out = [finish];
    if (this.meta.includeUsage) out.push({ ...this.base(), choices: [], usage: usageJson(this.usage ?? { promptTokens: 0, completionTokens: 0 }) });
    return out;
  }

  /** The non-stream body; call after `end()`. */
  completion(): Json {
    return {
      ...this.base(),
      choices: [{ text: this.text, index: 0, logprobs: null, finish_reason: this.finish ?? "stop" }],
      usage: usageJson(this.usage ?? { promptTokens: 0, completionTokens: 0 }),
      ...(this.timings ? { timings: this.timings } : {}),
      x_switchyard: this.extension(),
    };
  }

  private chunk(text: string, finish: FinishReason | null): Json {
    return { ...this.base(), choices: [{ text, index: 0, logprobs: null, finish_reason: finish }] };
  }

  private base(): Json {
    return { id: this.meta.id, object: "text_completion", created: this.meta.created, model: this.meta.model };
  }
}
