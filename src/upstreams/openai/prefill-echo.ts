// A continued answer made to begin with its prefill, as llama-server's does, whether or not this server echoes it.
import type { UpstreamEvent } from "../../events/events.ts";

/**
 * Routing continues a broken answer by sending what was written as a trailing assistant message and
 * cuts that text off the front of the new answer (routing/continuation/echo-strip.ts): llama-server echoes
 * the prefill. vLLM, SGLang, TGI, Ollama and the `prefix` and `partial` providers send only what
 * follows it (and so does a llama-server whose `echo` is off, llama.cpp PR #23089). So the
 * answer's first text is held until it shows which: when it begins with the prefill it passes as it
 * is; when it does not (or the answer moves on to a call, a finish or its usage), the prefill is
 * put in front of it. Reasoning passes meanwhile; an error lets the held text go as it came.
 */
export class PrefillEcho {
  private held: UpstreamEvent[] = [];
  private heldText = "";
  private deciding: boolean;

  constructor(private readonly prefill: string) {
    this.deciding = prefill !== "";
  }

  /** The events to hand on for `e`. */
  push(e: UpstreamEvent): UpstreamEvent[] {
    if (!this.deciding || e.type === "reasoning") return [e];
    if (e.type === "error") return this.release(false, e);
    if (e.type !== "text") return this.release(true, e);
    this.held.push(e);
    this.heldText += e.delta;
    if (this.heldText.length < this.prefill.length) return this.prefill.startsWith(this.heldText) ? [] : this.release(true);
    return this.release(!this.heldText.startsWith(this.prefill));
  }

  /** What is still held when the answer ends without deciding (an echo cut short): handed on with the prefill. */
  end(): UpstreamEvent[] {
    return this.deciding && this.held.length ? this.release(true) : [];
  }

  private release(prepend: boolean, then?: UpstreamEvent): UpstreamEvent[] {
    this.deciding = false;
    const out: UpstreamEvent[] = prepend ? [{ type: "text", delta: this.prefill }, ...this.held] : [...this.held];
    if (then) out.push(then);
    this.held = [];
    return out;
  }
}
