// The Responses events of a compaction v2 answer: the model's text becomes one sealed `compaction`
// item, never a message; the response completes with that item as its only output.
import type { UpstreamEvent } from "../../events/events.ts";
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import type { EventEncoder } from "../../responders/event-encoder.ts";
import { compactionItem } from "./compaction-item.ts";
import type { ResponseEncoder, ResponseStreamEvent } from "./response-encoder.ts";
import type { Sealer } from "./sealer.ts";

/**
 * Codex accepts a compaction only as exactly one `compaction` item and `response.completed`: the
 * summary's text is gathered, reasoning is left out, and a summary cut by its token limit still
 * completes (a shorter summary beats a failed session).
 */
export class CompactionEncoder implements EventEncoder<ResponseStreamEvent> {
  private summary = "";

  constructor(
    private readonly inner: ResponseEncoder,
    private readonly sealer: Sealer,
  ) {}

  get failed(): ErrorInfo | null {
    return this.inner.failed;
  }

  encode(event: UpstreamEvent): ResponseStreamEvent[] {
    switch (event.type) {
      case "text":
        this.summary += event.delta;
        return this.inner.start();
      case "reasoning":
      case "toolCall":
        return this.inner.start();
      case "finish":
        return this.inner.encode({ type: "finish", reason: "stop" });
      default:
        return this.inner.encode(event);
    }
  }

  end(): ResponseStreamEvent[] {
    if (this.inner.failed) return [];
    return [...this.inner.addItem({ ...compactionItem(this.sealer, this.summary.trim()) }), ...this.inner.end()];
  }
}
