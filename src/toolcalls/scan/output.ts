// Where the rewriter's events go: content and reasoning through their trimmed channels (whitespace
// is held until visible text follows), adjacent deltas of one kind joined into one event, drained
// once per push.

import type { UpstreamEvent } from "../../events/events.ts";
import { TrimmedChannel } from "./trimmed-channel.ts";

export class Output {
  private events: UpstreamEvent[] = [];
  // Whitespace is held back until something visible follows it, so no output ends with it.
  readonly content = new TrimmedChannel("");
  readonly reasoning = new TrimmedChannel("\n\n");
  /** `reasoningFormat: "none"`: reasoning is emitted as text, markers included. */
  readonly inlineReasoning: boolean;
  /** With reasoning inline, the prompt's opening marker, sent with the block's first text. */
  inlineOpener = "";

  constructor(inlineReasoning: boolean) {
    this.inlineReasoning = inlineReasoning;
  }

  /** Sends `text` as content; true when something visible went out (not only held whitespace). */
  text(text: string): boolean {
    const out = this.content.take(text);
    if (out === "") return false;
    this.event({ type: "text", delta: out });
    return true;
  }

  /** Sends `text` as a reasoning event (reasoning split off, not inline). */
  reasoningText(text: string): void {
    const out = this.reasoning.take(text);
    if (out !== "") this.event({ type: "reasoning", delta: out });
  }

  event(e: UpstreamEvent): void {
    // Not `this.events[this.events.length - 1]` on an empty array: index -1 is a slow property lookup in V8.
    const last = this.events.length > 0 ? this.events[this.events.length - 1] : undefined;
    if (e.type === "text" && last?.type === "text") last.delta += e.delta;
    else if (e.type === "reasoning" && last?.type === "reasoning") last.delta += e.delta;
    else this.events.push(e);
  }

  /** The events made ready since the last drain. */
  drain(): UpstreamEvent[] {
    const out = this.events;
    this.events = [];
    return out;
  }
}
