// The /v1/responses answer: the internal events as Responses stream events or one response object
// (the stream's state machine; its items are built by text-items.ts and tool-call-items.ts).
import type { FinishReason, Timings, Usage, UpstreamEvent } from "../../events/events.ts";
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import type { SwitchyardExtension } from "../../events/switchyard-extension.ts";
import { plainToolNames } from "./tool-origin.ts";
import type { ResponseError, ResponseErrorEvent } from "../wire/openai-wire.ts";
import { responseBase, responseErrorCode, usageJson, type ResponseMeta } from "./response-object.ts";
import { ResponseOutput, type ResponseStreamEvent } from "./response-stream.ts";
import { TextItems } from "./text-items.ts";
import { ToolCallItems } from "./tool-call-items.ts";

export { responseErrorCode, usageJson, type ResponseMeta } from "./response-object.ts";
export type { ResponseStreamEvent } from "./response-stream.ts";

type Json = Record<string, unknown>;

/**
 * Internal events → Responses API stream events and the response object (pure). Text becomes one
 * `message` item with one `output_text` part, reasoning a `reasoning` item with `reasoning_text`,
 * each tool call a `function_call` item (announced once its name has settled, as in chat), or, for a
 * custom tool or local_shell, a `custom_tool_call` / `local_shell_call` item sent whole once the call
 * is complete (the model's arguments are JSON around the real value). A new kind of output closes
 * the open item. The non-stream body is the same object, gathered.
 */
export class ResponseEncoder {
  private began = false;
  private readonly output = new ResponseOutput();
  private readonly text: TextItems;
  private readonly calls: ToolCallItems;
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;
  private timings: Timings | undefined;
  private failedWith: ErrorInfo | null = null;
  private ended = false;

  constructor(
    private readonly meta: ResponseMeta,
    private readonly extension: () => SwitchyardExtension,
  ) {
    this.text = new TextItems(this.output, meta.sealer);
    this.calls = new ToolCallItems(this.output, meta.tools ?? plainToolNames);
  }

  get failed(): ErrorInfo | null {
    return this.failedWith;
  }

  encode(event: UpstreamEvent): ResponseStreamEvent[] {
    if (this.failedWith || this.ended) return [];
    const out = this.begin();
    switch (event.type) {
      case "text":
      case "reasoning": {
        const kind = event.type === "text" ? "message" : "reasoning";
        if (this.text.openKind !== kind) {
          out.push(...this.closeAll());
          out.push(...this.text.open(kind));
        }
        out.push(this.text.delta(event.delta, event.type === "text" ? (event.logprobs ?? []) : []));
        return out;
      }
      case "toolCall":
        if (this.calls.has(event.index)) out.push(...this.calls.delta(event));
        else {
          out.push(...this.closeAll());
          this.calls.start(event);
        }
        return out;
      case "finish":
        this.finish = event.reason;
        out.push(...this.closeAll());
        return out;
      case "usage":
        this.usage = event.usage;
        this.timings = event.timings ?? this.timings;
        return out;
      case "error": {
        this.failedWith = event.error;
        const e = event.error;
        out.push(this.output.ev("response.failed", { response: this.failedResponse(e) }));
        const error: Omit<ResponseErrorEvent, "sequence_number"> = { type: "error", code: e.code, message: e.message, param: e.param ?? null };
        out.push(this.output.ev("error", error));
        return out;
      }
    }
  }

  /** `response.created` and `response.in_progress`, once: for an encoder in front of this one that holds its events back. */
  start(): ResponseStreamEvent[] {
    return this.failedWith || this.ended ? [] : this.begin();
  }

  /** A finished output item of another kind (a compaction), added whole after the open items close. */
  addItem(item: Json): ResponseStreamEvent[] {
    if (this.failedWith || this.ended) return [];
    const out = [...this.begin(), ...this.closeAll()];
    const outputIndex = this.output.items.length;
    this.output.items.push(item);
    out.push(this.output.ev("response.output_item.added", { output_index: outputIndex, item: structuredClone(item) }));
    out.push(this.output.ev("response.output_item.done", { output_index: outputIndex, item: structuredClone(item) }));
    return out;
  }

  /** The closing events once the upstream is done: open items closed, then completed or incomplete. */
  end(): ResponseStreamEvent[] {
    if (this.failedWith || this.ended) return [];
    const out = [...this.begin(), ...this.closeAll()];
    this.ended = true;
    const response = this.response();
    out.push(this.output.ev(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response }));
    return out;
  }

  /** The response object as it stands: final after `end()`. */
  response(): Json {
    const incomplete = this.finish === "length" ? "max_output_tokens" : this.finish === "content_filter" ? "content_filter" : null;
    const status = !this.ended ? "in_progress" : incomplete ? "incomplete" : "completed";
    return {
      ...responseBase(this.meta, status, this.output.items),
      incomplete_details: this.ended && incomplete ? { reason: incomplete } : null,
      usage: this.ended ? usageJson(this.usage) : null,
      ...(this.ended && this.timings ? { timings: this.timings } : {}),
      ...(this.ended ? { x_switchyard: this.extension() } : {}),
    };
  }

  /** The response object of a failed answer (stream `response.failed`, or a late non-stream failure). */
  failedResponse(e: ErrorInfo): Json {
    const error: ResponseError = { code: responseErrorCode(e), message: e.message };
    return { ...responseBase(this.meta, "failed", this.output.items), error, incomplete_details: null, usage: this.usage ? usageJson(this.usage) : null, x_switchyard: this.extension() };
  }

  private begin(): ResponseStreamEvent[] {
    if (this.began) return [];
    this.began = true;
    const response = this.response();
    return [this.output.ev("response.created", { response }), this.output.ev("response.in_progress", { response })];
  }

  /** Closes the open text/reasoning item and every call (announcing any still pending). */
  private closeAll(): ResponseStreamEvent[] {
    return [...this.text.close(), ...this.calls.close()];
  }
}
