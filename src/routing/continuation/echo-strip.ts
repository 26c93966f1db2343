// Cuts what the client already has off the front of a continued or replayed answer (or finds that
// it diverged), so the client never sees anything twice.
import type { UpstreamEvent } from "../../events/events.ts";

/**
 * The part of an answer the client already has, cut off the front of a later answer that repeats it:
 * - a `--jinja` llama-server continuing a trailing assistant message sends that message back first:
 *   its first content delta is the prefill joined to the first new token (docs/reliability.md);
 * - a replay (the same request again, as raw text, with the same seed) writes the reasoning and the
 *   text already sent again before what was lost.
 * Each channel's deltas are held until they cover what was sent on it; then that is cut off and the
 * rest flows. An answer that does not begin with what was sent did not go on with the client's
 * answer (a `--no-jinja` server closes the turn and starts a new one; a replay sampled otherwise):
 * `diverged`, and nothing of it is sent. Other events pass while the repeat is awaited.
 */
export class EchoStrip {
  private readonly channels: Record<"text" | "reasoning", { sent: string; held: string; awaiting: boolean }>;

  /** The repeat was cut off (or there was none to await): events now pass as they are. */
  get done(): boolean {
    return !this.channels.text.awaiting && !this.channels.reasoning.awaiting;
  }

  /** `text` (and `reasoning`, for a replay) is what the client was sent. */
  constructor(text: string, reasoning = "") {
    this.channels = {
      text: { sent: text, held: "", awaiting: text !== "" },
      reasoning: { sent: reasoning, held: "", awaiting: reasoning !== "" },
    };
  }

  /** The events to hand on for `e`, or "diverged". */
  push(e: UpstreamEvent): UpstreamEvent[] | "diverged" {
    if (this.done) return [e];
    if (e.type === "text" || e.type === "reasoning") {
      const c = this.channels[e.type];
      // Text before the reasoning sent was repeated: this answer left its reasoning elsewhere.
      if (e.type === "text" && this.channels.reasoning.awaiting) return "diverged";
      if (!c.awaiting) return [e];
      c.held += e.delta;
      if (c.held.length < c.sent.length) return c.sent.startsWith(c.held) ? [] : "diverged";
      if (!c.held.startsWith(c.sent)) return "diverged";
      c.awaiting = false;
      const rest = c.held.slice(c.sent.length);
      return rest === "" ? [] : [{ type: e.type, delta: rest }];
    }
    // The answer ending (or calling a tool) before the repeat was complete: it did not go on with this one.
    if (e.type === "finish" || e.type === "toolCall") return "diverged";
    return [e];
  }
}
