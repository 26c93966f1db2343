import type { UpstreamEvent } from "../../stream/events.ts";

/**
 * A `--jinja` llama-server continuing a trailing assistant message sends that message back first:
 * its first content delta is the prefill joined to the first new token (docs/reliability.md). The
 * continuation's text is held until it covers the prefill; then the prefill is cut off and the rest
 * flows. A continuation whose text does not begin with the prefill did not continue the answer (a
 * `--no-jinja` server closes the turn and starts a new one): `diverged`, and nothing of it is sent.
 * Events other than text pass while the echo is awaited.
 */
export class EchoStrip {
  private held = "";
  private awaiting: boolean;

  /** The echo was cut off (or there was none to await): events now pass as they are. */
  get done(): boolean {
    return !this.awaiting;
  }

  constructor(private readonly prefill: string) {
    this.awaiting = prefill !== "";
  }

  /** The events to hand on for `e`, or "diverged". */
  push(e: UpstreamEvent): UpstreamEvent[] | "diverged" {
    if (!this.awaiting) return [e];
    if (e.type === "text") {
      this.held += e.delta;
      if (this.held.length < this.prefill.length) return this.prefill.startsWith(this.held) ? [] : "diverged";
      if (!this.held.startsWith(this.prefill)) return "diverged";
      this.awaiting = false;
      const rest = this.held.slice(this.prefill.length);
      return rest === "" ? [] : [{ type: "text", delta: rest }];
    }
    // The answer ending before its echo was complete: the continuation never showed it continued.
    if (e.type === "finish") return "diverged";
    return [e];
  }
}
