// The rewriter as a TransformStream over the internal event stream: text events are rewritten,
// everything else passes through, and `finish: stop` becomes `tool_calls` when calls were found.
// The per-call scores are ready when the finish event passes (onToolCalls, or `toolCalls`).

import type { UpstreamEvent } from "../stream/events.ts";
import { ToolCallStreamRewriter } from "./stream-rewriter.ts";
import type { RewriteOptions, ToolCallReport, ToolDefinition } from "./types.ts";

export interface ToolCallTransformOptions extends RewriteOptions {
  /** Called once, right before the finish event (or at the end of the stream without one). */
  onToolCalls?: (reports: ToolCallReport[]) => void;
}

export class ToolCallTransform extends TransformStream<UpstreamEvent, UpstreamEvent> {
  readonly rewriter: ToolCallStreamRewriter;

  constructor(tools: readonly ToolDefinition[], options: ToolCallTransformOptions = {}) {
    const rewriter = new ToolCallStreamRewriter(tools, options);
    let reported = false;
    let failed = false;
    const finishText = (controller: TransformStreamDefaultController<UpstreamEvent>) => {
      for (const e of rewriter.flush()) controller.enqueue(e);
      if (!reported) {
        reported = true;
        options.onToolCalls?.(rewriter.reports);
      }
    };
    super({
      transform(event, controller) {
        switch (event.type) {
          case "text":
            for (const e of rewriter.push(event.delta)) controller.enqueue(e);
            return;
          case "toolCall":
            // Native calls from the upstream keep their indices; ours go after them.
            rewriter.indexOffset = Math.max(rewriter.indexOffset, event.index + 1);
            controller.enqueue(event);
            return;
          case "finish":
            finishText(controller);
            controller.enqueue({ type: "finish", reason: rewriter.finishReason(event.reason) });
            return;
          case "error":
            // The stream ends with the error frame; held-back text is not worth a late event.
            failed = true;
            controller.enqueue(event);
            return;
          default:
            controller.enqueue(event);
        }
      },
      flush(controller) {
        if (!failed) finishText(controller);
      },
    });
    this.rewriter = rewriter;
  }

  /** Scores of the calls found; complete once the finish event has passed. */
  get toolCalls(): ToolCallReport[] {
    return this.rewriter.reports;
  }
}

export function createToolCallTransform(
  tools: readonly ToolDefinition[],
  options: ToolCallTransformOptions = {},
): ToolCallTransform {
  return new ToolCallTransform(tools, options);
}
