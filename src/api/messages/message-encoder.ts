// The /v1/messages answer: the internal events as Anthropic Messages stream events or one message.
import type { FinishReason, Usage, UpstreamEvent } from "../../events/events.ts";
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import { randomId } from "../../lib/ids.ts";
import type { SwitchyardExtension } from "../../events/switchyard-extension.ts";
import { anthropicErrorBody } from "./anthropic-error.ts";

type Json = Record<string, unknown>;

/** One Anthropic stream event: `type` is also the SSE `event:` name. */
export interface MessageStreamEvent extends Json {
  type: string;
}

export interface MessageMeta {
  id: string;
  /** The model name the client asked for. */
  model: string;
}

type ToolBlock = { kind: "tool_use"; index: number; id: string; name: string; args: string };
type Block = { kind: "text"; index: number; text: string } | { kind: "thinking"; index: number; text: string } | ToolBlock;

interface PendingCall {
  id: string;
  name: string;
  args: string;
  block?: ToolBlock;
}

export function stopReason(reason: FinishReason | null): string {
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
  private readonly content: Json[] = [];
  private open: Block | null = null;
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
          const opened: Block = { kind, index: this.content.length, text: "" };
          this.open = opened;
          this.content.push(kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "", signature: "" });
          out.push({ type: "content_block_start", index: opened.index, content_block: structuredClone(this.content[opened.index]) });
        }
        const block = this.open as Extract<Block, { kind: "text" | "thinking" }>;
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
        out.push(anthropicErrorBody(event.error));
        return out;
    }
  }

  /** The closing events once the upstream is done: open blocks closed, message_delta, message_stop. */
  end(): MessageStreamEvent[] {
    if (this.failedWith || this.ended) return [];
    const out = [...this.begin(), ...this.flushCalls(), ...this.closeBlock()];
    this.ended = true;
    out.push({ type: "message_delta", delta: { stop_reason: stopReason(this.finish), stop_sequence: null }, usage: this.usageJson() });
    out.push({ type: "message_stop" });
    return out;
  }

  /** The message object: final after `end()`. */
  message(): Json {
    return {
      id: this.meta.id,
      type: "message",
      role: "assistant",
      model: this.meta.model,
      content: structuredClone(this.content),
      stop_reason: this.ended ? stopReason(this.finish) : null,
      stop_sequence: null,
      usage: this.usageJson(),
      ...(this.ended ? { x_switchyard: this.extension() } : {}),
    };
  }

  /** Anthropic's `input_tokens` leaves out the prompt tokens read from the cache (llama-server's cached prompt). */
  private usageJson(): Json {
    const prompt = this.usage?.promptTokens ?? 0;
    const cached = Math.min(Math.max(this.usage?.cachedTokens ?? 0, 0), prompt);
    return {
      input_tokens: prompt - cached,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: cached,
      output_tokens: this.usage?.completionTokens ?? 0,
    };
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
    if (block.kind === "text") this.content[block.index] = { type: "text", text: block.text };
    else if (block.kind === "thinking") {
      const signature = this.sign(block.text);
      this.content[block.index] = { type: "thinking", thinking: block.text, signature };
      out.push({ type: "content_block_delta", index: block.index, delta: { type: "signature_delta", signature } });
    } else this.content[block.index] = { type: "tool_use", id: block.id, name: block.name, input: parseInput(block.args) };
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
    this.content.push({ type: "tool_use", id: call.id, name: call.name, input: {} });
    out.push({ type: "content_block_start", index: block.index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } });
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
