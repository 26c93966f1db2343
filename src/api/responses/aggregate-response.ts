import type { Aggregator } from "../../stream/json-response.ts";
import type { ErrorInfo, UpstreamEvent } from "../../stream/events.ts";
import type { ResponseEncoder } from "./response-encoder.ts";

/** The non-stream Responses body: the stream's events gathered into the final response object. */
export class ResponseAggregator implements Aggregator {
  constructor(private readonly encoder: ResponseEncoder) {}

  push(event: UpstreamEvent): void {
    this.encoder.encode(event);
  }

  get failed(): ErrorInfo | null {
    return this.encoder.failed;
  }

  result(): Record<string, unknown> {
    this.encoder.end();
    return this.encoder.response();
  }

  /** A failure after the 200 was committed: a `status: "failed"` response with its `error`. */
  errorBody(error: ErrorInfo): Record<string, unknown> {
    return this.encoder.failedResponse(error);
  }
}
