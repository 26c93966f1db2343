// The Responses answer's text and reasoning items: the one open item, its deltas, and its close
// (a `message` with one `output_text` part, or a `reasoning` item with `reasoning_text`).
import type { Sealer } from "./sealer.ts";
import type { TokenLogprob } from "../../events/events.ts";
import { randomId } from "../../lib/ids.ts";
import { reasoningItem } from "./output-items.ts";
import type { ResponseOutput, ResponseStreamEvent } from "./response-stream.ts";

export type TextKind = "message" | "reasoning";

interface OpenItem {
  kind: TextKind;
  outputIndex: number;
  id: string;
  text: string;
  /** The text's token entries, when the client included `message.output_text.logprobs`. */
  logprobs: TokenLogprob[];
}

/** At most one text or reasoning item is open at a time; a new kind of output closes it. */
export class TextItems {
  private item: OpenItem | null = null;

  constructor(
    private readonly output: ResponseOutput,
    private readonly sealer: Sealer | undefined,
  ) {}

  /** The kind of the open item, if one is open. */
  get openKind(): TextKind | undefined {
    return this.item?.kind;
  }

  /** Opens an item of `kind` (the caller closed the one before): its `output_item.added` and `content_part.added`. */
  open(kind: TextKind): ResponseStreamEvent[] {
    const item: OpenItem = { kind, outputIndex: this.output.items.length, id: randomId(kind === "message" ? "msg_" : "rs_"), text: "", logprobs: [] };
    this.item = item;
    const added =
      kind === "message"
        ? { id: item.id, type: "message", status: "in_progress", role: "assistant", content: [] }
        : { id: item.id, type: "reasoning", summary: [], content: [] };
    this.output.items.push(added);
    const part = kind === "message" ? { type: "output_text", text: "", annotations: [], logprobs: [] } : { type: "reasoning_text", text: "" };
    return [
      this.output.ev("response.output_item.added", { output_index: item.outputIndex, item: structuredClone(added) }),
      this.output.ev("response.content_part.added", { item_id: item.id, output_index: item.outputIndex, content_index: 0, part }),
    ];
  }

  /** A delta of the open item's text (with its logprobs, for a message). */
  delta(delta: string, logprobs: TokenLogprob[]): ResponseStreamEvent {
    const item = this.item!;
    item.text += delta;
    if (logprobs.length > 0) item.logprobs.push(...logprobs);
    const name = item.kind === "message" ? "response.output_text.delta" : "response.reasoning_text.delta";
    return this.output.ev(name, { item_id: item.id, output_index: item.outputIndex, content_index: 0, delta, ...(item.kind === "message" ? { logprobs } : {}) });
  }

  /** Closes the open item, if any: its text's done, its part's done, its item's done. */
  close(): ResponseStreamEvent[] {
    const item = this.item;
    if (!item) return [];
    this.item = null;
    const where = { item_id: item.id, output_index: item.outputIndex, content_index: 0 };
    if (item.kind === "message") {
      const part = { type: "output_text", text: item.text, annotations: [], logprobs: item.logprobs };
      const done = { id: item.id, type: "message", status: "completed", role: "assistant", content: [part] };
      this.output.items[item.outputIndex] = done;
      return [
        this.output.ev("response.output_text.done", { ...where, text: item.text, logprobs: item.logprobs }),
        this.output.ev("response.content_part.done", { ...where, part }),
        this.output.ev("response.output_item.done", { output_index: item.outputIndex, item: structuredClone(done) }),
      ];
    }
    const part = { type: "reasoning_text", text: item.text };
    const done = reasoningItem(item.id, item.text, this.sealer);
    this.output.items[item.outputIndex] = done;
    return [
      this.output.ev("response.reasoning_text.done", { ...where, text: item.text }),
      this.output.ev("response.content_part.done", { ...where, part }),
      this.output.ev("response.output_item.done", { output_index: item.outputIndex, item: structuredClone(done) }),
    ];
  }
}
