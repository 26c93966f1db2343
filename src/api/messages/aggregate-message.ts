import type { Aggregator } from "../../stream/json-response.ts";
import type { ErrorInfo, UpstreamEvent } from "../../stream/events.ts";
import type { MessageEncoder } from "./message-encoder.ts";

/** The non-stream Messages body: the stream's events gathered into the final message. */
export class MessageAggregator implements Aggregator {
  constructor(private readonly encoder: MessageEncoder) {}

  push(event: UpstreamEvent): void {
    this.encoder.encode(event);
  }

  get failed(): ErrorInfo | null {
    return this.encoder.failed;
  }

  result(): Record<string, unknown> {
    this.encoder.end();
    return this.encoder.message();
  }
}
