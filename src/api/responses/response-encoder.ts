// The /v1/responses answer: the internal events as Responses stream events or one response object.
import type { Sealer } from "./sealer.ts";
import type { FinishReason, Timings, TokenLogprob, Usage, UpstreamEvent } from "../../events/events.ts";
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import { randomId } from "../../lib/ids.ts";
import type { SwitchyardExtension } from "../../events/switchyard-extension.ts";
import { customToolInput } from "./custom-tool.ts";
import { localShellAction } from "./local-shell.ts";
import { customToolCallItem, functionCallItem, localShellCallItem, reasoningItem } from "./output-items.ts";
import { plainToolNames, type ToolNames, type ToolOrigin } from "./tool-origin.ts";
import type { ResponseError, ResponseErrorCode, ResponseErrorEvent, ResponseUsage } from "../wire/openai-wire.ts";

type Json = Record<string, unknown>;

/** One Responses stream event: `type` is also the SSE `event:` name. */
export interface ResponseStreamEvent extends Json {
  type: string;
  sequence_number: number;
}

export interface ResponseMeta {
  id: string;
  createdAt: number;
  /** The model name the client asked for. */
  model: string;
  /** Request fields echoed on the response object (instructions, tools, temperature, …). */
  echo: Json;
  /** The model's tool names → the client's tools (default: every name is a function of that name). */
  tools?: ToolNames;
  /** Seals each reasoning item's text into its `encrypted_content` (include: reasoning.encrypted_content). */
  sealer?: Sealer;
}

interface OpenItem {
  kind: "message" | "reasoning";
  outputIndex: number;
  id: string;
  text: string;
  /** The text's token entries, when the client included `message.output_text.logprobs`. */
  logprobs: TokenLogprob[];
}

interface Call {
  outputIndex: number;
  id: string;
  callId: string;
  /** The name the model called, i.e. the chat tool's name. */
  name: string;
  args: string;
  announced: boolean;
  done: boolean;
}

/**
 * Internal events → Responses API stream events and the response object (pure). Text becomes one
 * `message` item with one `output_text` part, reasoning a `reasoning` item with `reasoning_text`,
 * each tool call a `function_call` item (announced once its name has settled, as in chat), or, for a
 * custom tool or local_shell, a `custom_tool_call` / `local_shell_call` item sent whole once the call
 * is complete (the model's arguments are JSON around the real value). A new kind of output closes
 * the open item. The non-stream body is the same object, gathered.
 */
export class ResponseEncoder {
  private seq = 0;
  private began = false;
  private readonly output: Json[] = [];
  private open: OpenItem | null = null;
  private readonly calls = new Map<number, Call>();
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;
  private timings: Timings | undefined;
  private failedWith: ErrorInfo | null = null;
  private ended = false;
  private readonly names: ToolNames;

  constructor(
    private readonly meta: ResponseMeta,
    private readonly extension: () => SwitchyardExtension,
  ) {
    this.names = meta.tools ?? plainToolNames;
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
        if (this.open?.kind !== kind) {
          out.push(...this.closeAll());
          out.push(...this.openItem(kind));
        }
        const item = this.open!;
        item.text += event.delta;
        const logprobs = event.type === "text" ? (event.logprobs ?? []) : [];
        if (logprobs.length > 0) item.logprobs.push(...logprobs);
        const name = kind === "message" ? "response.output_text.delta" : "response.reasoning_text.delta";
        out.push(this.ev(name, { item_id: item.id, output_index: item.outputIndex, content_index: 0, delta: event.delta, ...(kind === "message" ? { logprobs } : {}) }));
        return out;
      }
      case "toolCall":
        out.push(...this.toolCall(event));
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
        out.push(this.ev("response.failed", { response: this.failedResponse(e) }));
        const error: Omit<ResponseErrorEvent, "sequence_number"> = { type: "error", code: e.code, message: e.message, param: e.param ?? null };
        out.push(this.ev("error", error));
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
    const outputIndex = this.output.length;
    this.output.push(item);
    out.push(this.ev("response.output_item.added", { output_index: outputIndex, item: structuredClone(item) }));
    out.push(this.ev("response.output_item.done", { output_index: outputIndex, item: structuredClone(item) }));
    return out;
  }

  /** The closing events once the upstream is done: open items closed, then completed or incomplete. */
  end(): ResponseStreamEvent[] {
    if (this.failedWith || this.ended) return [];
    const out = [...this.begin(), ...this.closeAll()];
    this.ended = true;
    const response = this.response();
    out.push(this.ev(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response }));
    return out;
  }

  /** The response object as it stands: final after `end()`. */
  response(): Json {
    const incomplete = this.finish === "length" ? "max_output_tokens" : this.finish === "content_filter" ? "content_filter" : null;
    const status = !this.ended ? "in_progress" : incomplete ? "incomplete" : "completed";
    return {
      ...this.base(status),
      incomplete_details: this.ended && incomplete ? { reason: incomplete } : null,
      usage: this.ended ? usageJson(this.usage) : null,
      ...(this.ended && this.timings ? { timings: this.timings } : {}),
      ...(this.ended ? { x_switchyard: this.extension() } : {}),
    };
  }

  /** The response object of a failed answer (stream `response.failed`, or a late non-stream failure). */
  failedResponse(e: ErrorInfo): Json {
    const error: ResponseError = { code: responseErrorCode(e), message: e.message };
    return { ...this.base("failed"), error, incomplete_details: null, usage: this.usage ? usageJson(this.usage) : null, x_switchyard: this.extension() };
  }

  private base(status: string): Json {
    return {
      id: this.meta.id,
      object: "response",
      created_at: this.meta.createdAt,
      status,
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: this.meta.model,
      output: structuredClone(this.output),
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: false,
      temperature: null,
      text: { format: { type: "text" } },
      tool_choice: "auto",
      tools: [],
      top_p: null,
      truncation: "disabled",
      user: null,
      metadata: {},
      ...this.meta.echo,
    };
  }

  private begin(): ResponseStreamEvent[] {
    if (this.began) return [];
    this.began = true;
    const response = this.response();
    return [this.ev("response.created", { response }), this.ev("response.in_progress", { response })];
  }

  private openItem(kind: OpenItem["kind"]): ResponseStreamEvent[] {
    const item: OpenItem = { kind, outputIndex: this.output.length, id: randomId(kind === "message" ? "msg_" : "rs_"), text: "", logprobs: [] };
    this.open = item;
    const added =
      kind === "message"
        ? { id: item.id, type: "message", status: "in_progress", role: "assistant", content: [] }
        : { id: item.id, type: "reasoning", summary: [], content: [] };
    this.output.push(added);
    const part = kind === "message" ? { type: "output_text", text: "", annotations: [], logprobs: [] } : { type: "reasoning_text", text: "" };
    return [
      this.ev("response.output_item.added", { output_index: item.outputIndex, item: structuredClone(added) }),
      this.ev("response.content_part.added", { item_id: item.id, output_index: item.outputIndex, content_index: 0, part }),
    ];
  }

  private closeOpen(): ResponseStreamEvent[] {
    const item = this.open;
    if (!item) return [];
    this.open = null;
    const where = { item_id: item.id, output_index: item.outputIndex, content_index: 0 };
    if (item.kind === "message") {
      const part = { type: "output_text", text: item.text, annotations: [], logprobs: item.logprobs };
      const done = { id: item.id, type: "message", status: "completed", role: "assistant", content: [part] };
      this.output[item.outputIndex] = done;
      return [
        this.ev("response.output_text.done", { ...where, text: item.text, logprobs: item.logprobs }),
        this.ev("response.content_part.done", { ...where, part }),
        this.ev("response.output_item.done", { output_index: item.outputIndex, item: structuredClone(done) }),
      ];
    }
    const part = { type: "reasoning_text", text: item.text };
    const done = reasoningItem(item.id, item.text, this.meta.sealer);
    this.output[item.outputIndex] = done;
    return [
      this.ev("response.reasoning_text.done", { ...where, text: item.text }),
      this.ev("response.content_part.done", { ...where, part }),
      this.ev("response.output_item.done", { output_index: item.outputIndex, item: structuredClone(done) }),
    ];
  }

  private toolCall(event: Extract<UpstreamEvent, { type: "toolCall" }>): ResponseStreamEvent[] {
    let call = this.calls.get(event.index);
    if (!call) {
      const out = this.closeAll();
      call = { outputIndex: -1, id: randomId("fc_"), callId: randomId("call_"), name: event.name ?? "", args: event.argumentsDelta, announced: false, done: false };
      this.calls.set(event.index, call);
      return out;
    }
    if (call.done) return []; // nothing may follow an item's done event
    if (!call.announced) {
      if (event.name) call.name = event.name; // a resent name replaces, never appends
      call.args += event.argumentsDelta;
      // Custom and local_shell calls wait for their whole arguments (sent in closeAll).
      return !event.name && event.argumentsDelta !== "" && this.origin(call).kind === "function" ? this.announce(call) : [];
    }
    call.args += event.argumentsDelta;
    if (event.argumentsDelta === "") return [];
    return [this.ev("response.function_call_arguments.delta", { item_id: call.id, output_index: call.outputIndex, delta: event.argumentsDelta })];
  }

  private announce(call: Call): ResponseStreamEvent[] {
    call.announced = true;
    call.outputIndex = this.output.length;
    const item = functionCallItem(call.id, call.callId, this.functionOrigin(call), "", "in_progress");
    this.output.push(item);
    const out = [this.ev("response.output_item.added", { output_index: call.outputIndex, item: structuredClone(item) })];
    if (call.args) out.push(this.ev("response.function_call_arguments.delta", { item_id: call.id, output_index: call.outputIndex, delta: call.args }));
    return out;
  }

  /** Closes the open text/reasoning item and every call (announcing any still pending). */
  private closeAll(): ResponseStreamEvent[] {
    const out = this.closeOpen();
    for (const call of this.calls.values()) {
      if (call.done) continue;
      if (!call.announced && this.origin(call).kind !== "function") {
        out.push(...this.sendWhole(call));
        continue;
      }
      if (!call.announced) out.push(...this.announce(call));
      call.done = true;
      const origin = this.functionOrigin(call);
      const item = functionCallItem(call.id, call.callId, origin, call.args, "completed");
      this.output[call.outputIndex] = item;
      out.push(this.ev("response.function_call_arguments.done", { item_id: call.id, output_index: call.outputIndex, name: origin.name, arguments: call.args }));
      out.push(this.ev("response.output_item.done", { output_index: call.outputIndex, item: structuredClone(item) }));
    }
    return out;
  }

  /** A complete custom or local_shell call: its item added (with the input deltas of a custom call) and done. */
  private sendWhole(call: Call): ResponseStreamEvent[] {
    const origin = this.origin(call);
    call.announced = true;
    call.done = true;
    call.outputIndex = this.output.length;
    const at = { output_index: call.outputIndex };
    if (origin.kind === "local_shell") {
      call.id = randomId("lsh_");
      const action = localShellAction(call.args);
      const added = localShellCallItem(call.id, call.callId, action, "in_progress");
      const done = localShellCallItem(call.id, call.callId, action, "completed");
      this.output.push(done);
      return [this.ev("response.output_item.added", { ...at, item: structuredClone(added) }), this.ev("response.output_item.done", { ...at, item: structuredClone(done) })];
    }
    if (origin.kind !== "custom") return [];
    call.id = randomId("ctc_");
    const input = customToolInput(call.args);
    const done = customToolCallItem(call.id, call.callId, origin, input, "completed");
    this.output.push(done);
    return [
      this.ev("response.output_item.added", { ...at, item: customToolCallItem(call.id, call.callId, origin, "", "in_progress") }),
      this.ev("response.custom_tool_call_input.delta", { item_id: call.id, ...at, delta: input }),
      this.ev("response.custom_tool_call_input.done", { item_id: call.id, ...at, input }),
      this.ev("response.output_item.done", { ...at, item: structuredClone(done) }),
    ];
  }

  private origin(call: Call): ToolOrigin {
    return this.names.origin(call.name);
  }

  /** The origin of a call sent as a function_call (a name the client gave no tool is a function too). */
  private functionOrigin(call: Call): Extract<ToolOrigin, { kind: "function" }> {
    const origin = this.origin(call);
    return origin.kind === "function" ? origin : { kind: "function", name: call.name };
  }

  private ev(type: string, body: Json): ResponseStreamEvent {
    return { type, sequence_number: this.seq++, ...body };
  }
}

export function usageJson(u: Usage | null): ResponseUsage {
  const input = u?.promptTokens ?? 0;
  const output = u?.completionTokens ?? 0;
  return {
    input_tokens: input,
    // cache_write_tokens: llama-server's prompt cache is written as a side effect, never billed apart.
    input_tokens_details: { cached_tokens: u?.cachedTokens ?? 0, cache_write_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

/**
 * A failed Response's `error.code` is one of the spec's values (clients type it as that enum):
 * Switchyard's own code stays in the `error` event that follows `response.failed`.
 */
export function responseErrorCode(e: ErrorInfo): ResponseErrorCode {
  if (e.status === 429) return "rate_limit_exceeded";
  if (e.status >= 400 && e.status < 500) return "invalid_prompt";
  return "server_error";
}
