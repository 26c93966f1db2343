// The Responses answer's tool-call items: a `function_call` announced once its name has settled and
// its arguments streamed, or a `custom_tool_call` / `local_shell_call` sent whole once complete.
import type { UpstreamEvent } from "../../events/events.ts";
import { randomId } from "../../lib/ids.ts";
import { customToolInput } from "./custom-tool.ts";
import { localShellAction } from "./local-shell.ts";
import { customToolCallItem, functionCallItem, localShellCallItem } from "./output-items.ts";
import type { ToolNames, ToolOrigin } from "./tool-origin.ts";
import type { ResponseOutput, ResponseStreamEvent } from "./response-stream.ts";

type ToolCallEvent = Extract<UpstreamEvent, { type: "toolCall" }>;

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

/** The answer's tool calls by their index in the stream. */
export class ToolCallItems {
  private readonly calls = new Map<number, Call>();

  constructor(
    private readonly output: ResponseOutput,
    private readonly names: ToolNames,
  ) {}

  /** Whether a call with this index has begun (a new one closes the items open before it: the caller's). */
  has(index: number): boolean {
    return this.calls.has(index);
  }

  /** A new call's first event: nothing is sent until its name has settled. */
  start(event: ToolCallEvent): void {
    this.calls.set(event.index, { outputIndex: -1, id: randomId("fc_"), callId: randomId("call_"), name: event.name ?? "", args: event.argumentsDelta, announced: false, done: false });
  }

  /** A later event of a call that has begun: its name or arguments. */
  delta(event: ToolCallEvent): ResponseStreamEvent[] {
    const call = this.calls.get(event.index)!;
    if (call.done) return []; // nothing may follow an item's done event
    if (!call.announced) {
      if (event.name) call.name = event.name; // a resent name replaces, never appends
      call.args += event.argumentsDelta;
      // Custom and local_shell calls wait for their whole arguments (sent in close).
      return !event.name && event.argumentsDelta !== "" && this.origin(call).kind === "function" ? this.announce(call) : [];
    }
    call.args += event.argumentsDelta;
    if (event.argumentsDelta === "") return [];
    return [this.output.ev("response.function_call_arguments.delta", { item_id: call.id, output_index: call.outputIndex, delta: event.argumentsDelta })];
  }

  /** Closes every call not yet done (announcing any still pending; a custom or local_shell call sent whole). */
  close(): ResponseStreamEvent[] {
    const out: ResponseStreamEvent[] = [];
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
      this.output.items[call.outputIndex] = item;
      out.push(this.output.ev("response.function_call_arguments.done", { item_id: call.id, output_index: call.outputIndex, name: origin.name, arguments: call.args }));
      out.push(this.output.ev("response.output_item.done", { output_index: call.outputIndex, item: structuredClone(item) }));
    }
    return out;
  }

  private announce(call: Call): ResponseStreamEvent[] {
    call.announced = true;
    call.outputIndex = this.output.items.length;
    const item = functionCallItem(call.id, call.callId, this.functionOrigin(call), "", "in_progress");
    this.output.items.push(item);
    const out = [this.output.ev("response.output_item.added", { output_index: call.outputIndex, item: structuredClone(item) })];
    if (call.args) out.push(this.output.ev("response.function_call_arguments.delta", { item_id: call.id, output_index: call.outputIndex, delta: call.args }));
    return out;
  }

  /** A complete custom or local_shell call: its item added (with the input deltas of a custom call) and done. */
  private sendWhole(call: Call): ResponseStreamEvent[] {
    const origin = this.origin(call);
    call.announced = true;
    call.done = true;
    call.outputIndex = this.output.items.length;
    const at = { output_index: call.outputIndex };
    if (origin.kind === "local_shell") {
      call.id = randomId("lsh_");
      const action = localShellAction(call.args);
      const added = localShellCallItem(call.id, call.callId, action, "in_progress");
      const done = localShellCallItem(call.id, call.callId, action, "completed");
      this.output.items.push(done);
      return [this.output.ev("response.output_item.added", { ...at, item: structuredClone(added) }), this.output.ev("response.output_item.done", { ...at, item: structuredClone(done) })];
    }
    if (origin.kind !== "custom") return [];
    call.id = randomId("ctc_");
    const input = customToolInput(call.args);
    const done = customToolCallItem(call.id, call.callId, origin, input, "completed");
    this.output.items.push(done);
    return [
      this.output.ev("response.output_item.added", { ...at, item: customToolCallItem(call.id, call.callId, origin, "", "in_progress") }),
      this.output.ev("response.custom_tool_call_input.delta", { item_id: call.id, ...at, delta: input }),
      this.output.ev("response.custom_tool_call_input.done", { item_id: call.id, ...at, input }),
      this.output.ev("response.output_item.done", { ...at, item: structuredClone(done) }),
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
}
