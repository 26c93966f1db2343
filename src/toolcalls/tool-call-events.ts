// The rewriter over the internal event stream, as a pure stage: text events are rewritten,
// everything else passes through, and `finish: stop` becomes `tool_calls` when calls were found.
// The per-call scores are ready when the finish event passes (onToolCalls, or `toolCalls`).

import type { EventStage } from "../events/pull-through.ts";
import type { FinishReason, UpstreamEvent } from "../events/events.ts";
import { ToolCallStreamRewriter } from "./scan/stream-rewriter.ts";
import type { RewriteOptions } from "./scan/rewrite-options.ts";
import type { ToolCallReport, ToolDefinition } from "./scoring/types.ts";

export interface ToolCallEventsOptions extends RewriteOptions {
  /** Called once, right before the finish event (or at the end of the stream without one). */
  onToolCalls?: (reports: ToolCallReport[]) => void;
}

export class ToolCallEvents implements EventStage {
  readonly rewriter: ToolCallStreamRewriter;
  private reported = false;
  private failed = false;

  constructor(
    tools: readonly ToolDefinition[],
    private readonly options: ToolCallEventsOptions = {},
  ) {
    this.rewriter = new ToolCallStreamRewriter(tools, options);
  }

  push(event: UpstreamEvent): UpstreamEvent[] {
    switch (event.type) {
      case "text":
        return this.rewriter.push(event.delta);
      case "toolCall":
        // Native calls from the upstream keep their indices; ours go after them.
        this.rewriter.indexOffset = Math.max(this.rewriter.indexOffset, event.index + 1);
        return [event];
      case "finish":
        return [...this.finishText(event.reason), { type: "finish", reason: this.rewriter.finishReason(event.reason) }];
      case "error":
        // The stream ends with the error frame; held-back text is not worth a late event.
        this.failed = true;
        return [event];
      default:
        return [event];
    }
  }

  end(): UpstreamEvent[] {
    // No finish event: the answer was cut off.
    return this.failed ? [] : this.finishText("length");
  }

  /** Scores of the calls found; complete once the finish event has passed. */
  get toolCalls(): ToolCallReport[] {
    return this.rewriter.reports;
  }

  private finishText(reason: FinishReason): UpstreamEvent[] {
    const out = this.rewriter.flush(reason);
    if (!this.reported) {
      this.reported = true;
      this.options.onToolCalls?.(this.rewriter.reports);
    }
    return out;
  }
}
