// A finish reason as a server that speaks OpenAI's chat wire writes it → the internal one.
import type { FinishReason } from "../../events/events.ts";

/** Total: an unknown reason never breaks a stream. */
export function mapFinishReason(reason: string): FinishReason {
  switch (reason) {
    case "stop":
    case "length":
    case "tool_calls":
    case "content_filter":
      return reason;
    case "function_call":
      return "tool_calls";
    default:
      // "eos", "abort", anything new: the generation ended normally as far as the client can tell.
      return "stop";
  }
}
