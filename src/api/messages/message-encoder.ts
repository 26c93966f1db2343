// The /v1/messages answer: the internal events as Anthropic Messages stream events or one message.
import type { FinishReason, Usage, UpstreamEvent } from "../../events/events.ts";
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import { randomId } from "../../lib/ids.ts";
import type { SwitchyardExtension } from "../../events/switchyard-extension.ts";
import { anthropicErrorBody } from "./anthropic-error.ts";
import type { Message, MessageDeltaUsage, RawMessageDeltaEvent, RefusalStopDetails, StopReason, TextBlock, ThinkingBlock, ToolUseBlock, Usage as WireUsage } from "../wire/anthropic-wire.ts";

/** The message: Anthropic's object (typed by its SDK's types, scripts/gen-wire-types.mjs) and Switchyard's addition. */
export type MessageBody = Message & { content: Block[]; x_switchyard?: SwitchyardExtension };
/** The content blocks Switchyard writes. */
type Block = TextBlock | ThinkingBlock | ToolUseBlock;

type Json = Record<string, unknown>;

/** One Anthropic stream event: `type` is also the SSE `event:` name. */
export interface MessageStreamEvent extends Json {
  type: string;
}

export interface MessageMeta {
  id: string;
  /** The model name the client asked for. */
  model: string;
  /** The request's id, for a stream error event's `request_id`. */
  requestId?: string;
  /** The tier that served it (`usage.service_tier`). */
  serviceTier?: "standard" | "priority";
}

type ToolBlock = { kind: "tool_use"; index: number; id: string; name: string; args: string };
type OpenBlock = { kind: "text"; index: number; text: string } | { kind: "thinking"; index: number; text: string } | ToolBlock;

interface PendingCall {
  id: string;
  name: string;
  args: string;
  block?: ToolBlock;
}

export function stopReason(reason: FinishReason | null): StopReason {
  switch (reason) {
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}

/** A refusal's stop details (no category: a local model gives none); null for any other stop. */
export function stopDetails(stop: StopReason | null): RefusalStopDetails | null {
  return stop === "refusal" ? { type: "refusal", category: null, explanation: null } : null;
}

/** A tool_use block: every call is the model's own (`caller: direct`; Switchyard runs no server tools). */
function toolUseBlock(id: string, name: string, input: Json): ToolUseBlock {
  return { type: "tool_use", id, name, input, caller: { type: "direct" } };
}

/** Signs a thinking block's text, for its `signature` (the route passes the deployment's sealer). */
export type SignThinking = (thinking: string) => string;

/**
 * Internal events → Anthropic Messages stream events and the message object (pure). Text, thinking
 * and each tool call are content blocks, opened and closed in order; a tool call's block starts
 * once its name has settled (as in chat). A thinking block ends with its `signature` (a
 * `signature_delta` before its `content_block_stop`, as Anthropic sends it). The non-stream body is
 * the same message, gathered.
 */
export class MessageEncoder {
  private began = false;
  private readonly content: Block[] = [];
  private open: OpenBlock | null = null;
  private readonly calls = new Map<number, PendingCall>();
  private finish: FinishReason | null = null;
  private usage: Usage | null = null;
  private failedWith: ErrorInfo | null = null;
  private ended = false;

  constructor(
    private readonly meta: MessageMeta,
    private readonly extension: () => SwitchyardExtension,
    private readonly sign: SignThinking = () => "",
  ) {}

  get failed(): ErrorInfo | null {
    return this.failedWith;
  }

  encode(event: UpstreamEvent): MessageStreamEvent[] {
    if (this.failedWith || this.ended) return [];
    const out = this.begin();
    switch (event.type) {
      case "text":
      case "reasoning": {
        const kind = event.type === "text" ? "text" : "thinking";
        if (this.open?.kind !== kind) {
          out.push(...this.flushCalls(), ...this.closeBlock());
          const opened: OpenBlock = { kind, index: this.content.length, text: "" };
          this.open = opened;
          this.content.push(kind === "text" ? { type: "text", text: "", citations: null } : { type: "thinking", thinking: "", signature: "" });
          out.push({ type: "content_block_start", index: opened.index, content_block: structuredClone(this.content[opened.index]) });
        }
        const block = this.open as Extract<OpenBlock, { kind: "text" | "thinking" }>;
        block.text += event.delta;
        const delta = kind === "text" ? { type: "text_delta", text: event.delta } : { type: "thinking_delta", thinking: event.delta };
        out.push({ type: "content_block_delta", index: block.index, delta });
        return out;
      }
      case "toolCall":
        out.push(...this.toolCall(event));
        return out;
      case "finish":
        this.finish = event.reason;
        out.push(...this.flushCalls(), ...this.closeBlock());
        return out;
      case "usage":
        this.usage = event.usage;
        return out;
      case "error":
        this.failedWith = event.error;
        out.push(anthropicErrorBody(event.error, this.meta.requestId ?? null));
        return out;
    }
  }

  /** The closing events once the upstream is done: open blocks closed, message_delta, message_stop. */
  end(): MessageStreamEvent[] {
    if (this.failedWith || this.ended) return [];
    const out = [...this.begin(), ...this.flushCalls(), ...this.closeBlock()];
    this.ended = true;
    const stop = stopReason(this.finish);
    const usage: MessageDeltaUsage = { ...this.usageJson(), output_tokens_details: null, server_tool_use: null };
    const delta: RawMessageDeltaEvent = { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null, stop_details: stopDetails(stop), container: null }, usage };
    out.push(delta);
    out.push({ type: "message_stop" });
    return out;
  }

  /** The message object: final after `end()`. */
  message(): MessageBody {
    const stop = this.ended ? stopReason(this.finish) : null;
    return {
      id: this.meta.id,
      type: "message",
      role: "assistant",
      model: this.meta.model,
      content: structuredClone(this.content),
      stop_reason: stop,
      stop_sequence: null,
      stop_details: stopDetails(stop),
      container: null,
      usage: this.messageUsage(),
      ...(this.ended ? { x_switchyard: this.extension() } : {}),
    };
  }

  /**
   * The counts every usage object carries (message_delta's adds its own nulls, the message its
   * own). Anthropic's `input_tokens` leaves out the prompt tokens read from the cache (llama-server's cached prompt).
   */
  private usageJson(): Pick<WireUsage, "input_tokens" | "cache_creation_input_tokens" | "cache_read_input_tokens" | "output_tokens"> {
    const prompt = this.usage?.promptTokens ?? 0;
    const cached = Math.min(Math.max(this.usage?.cachedTokens ?? 0, 0), prompt);
    return {
      input_tokens: prompt - cached,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: cached,
      output_tokens: this.usage?.completionTokens ?? 0,
    };
  }

  /**
   * The message's usage: no cache writes (llama-server's prompt cache is not billed apart), and what
   * only Anthropic's platform has (server tools, tiers, inference region, thinking counts) null.
   */
  private messageUsage(): WireUsage {
    const cache_creation = { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 };
    return { ...this.usageJson(), cache_creation, inference_geo: null, output_tokens_details: null, server_tool_use: null, service_tier: this.meta.serviceTier ?? null };
  }

  private begin(): MessageStreamEvent[] {
    if (this.began) return [];
    this.began = true;
    return [{ type: "message_start", message: this.message() }, { type: "ping" }];
  }

  private closeBlock(): MessageStreamEvent[] {
    const block = this.open;
    if (!block) return [];
    this.open = null;
    const out: MessageStreamEvent[] = [];
    if (block.kind === "text") this.content[block.index] = { type: "text", text: block.text, citations: null };
    else if (block.kind === "thinking") {
      const signature = this.sign(block.text);
      this.content[block.index] = { type: "thinking", thinking: block.text, signature };
      out.push({ type: "content_block_delta", index: block.index, delta: { type: "signature_delta", signature } });
    } else this.content[block.index] = toolUseBlock(block.id, block.name, parseInput(block.args));
    out.push({ type: "content_block_stop", index: block.index });
    return out;
  }

  private toolCall(event: Extract<UpstreamEvent, { type: "toolCall" }>): MessageStreamEvent[] {
    let call = this.calls.get(event.index);
    if (!call) {
      const out = [...this.flushCalls(), ...this.closeBlock()];
      this.calls.set(event.index, { id: randomId("toolu_"), name: event.name ?? "", args: event.argumentsDelta });
      return out;
    }
    if (!call.block) {
      if (event.name) call.name = event.name; // a resent name replaces, never appends
      call.args += event.argumentsDelta;
      return !event.name && event.argumentsDelta !== "" ? this.startCall(call) : [];
    }
    if (this.open !== call.block || event.argumentsDelta === "") return []; // nothing may follow a block's stop
    call.block.args += event.argumentsDelta;
    return [{ type: "content_block_delta", index: call.block.index, delta: { type: "input_json_delta", partial_json: event.argumentsDelta } }];
  }

  private startCall(call: PendingCall): MessageStreamEvent[] {
    const out = this.closeBlock();
    const block: ToolBlock = { kind: "tool_use", index: this.content.length, id: call.id, name: call.name, args: call.args };
    call.block = block;
    this.open = block;
    this.content.push(toolUseBlock(call.id, call.name, {}));
    out.push({ type: "content_block_start", index: block.index, content_block: toolUseBlock(call.id, call.name, {}) });
    if (call.args) out.push({ type: "content_block_delta", index: block.index, delta: { type: "input_json_delta", partial_json: call.args } });
    return out;
  }

  /** Starts (and so settles) every call still waiting for its name. */
  private flushCalls(): MessageStreamEvent[] {
    const out: MessageStreamEvent[] = [];
    for (const call of this.calls.values()) if (!call.block) out.push(...this.startCall(call));
    return out;
  }
}

/** Tool input must be an object; arguments that are not one are kept, under a name that says so. */
function parseInput(args: string): Json {
  if (args.trim() === "") return {};
  try {
    const v: unknown = JSON.parse(args);
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Json;
  } catch {}
  return { _unparsed_arguments: args };
}
