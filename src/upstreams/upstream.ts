import type { ChatRequest } from "../schemas/chat-request.ts";
import type { UpstreamEvent } from "../stream/events.ts";

export interface AttemptContext {
  requestId: string;
  /** Aborted when the client leaves or the attempt is abandoned; the upstream work must stop. */
  signal: AbortSignal;
  /** Until upstream headers. */
  responseStartMs: number;
  env: Record<string, unknown>;
}

/**
 * An attempt's events, read one at a time. A `ReadableStream<UpstreamEvent>`'s reader is one; an
 * adapter may also read its body straight into events, with no stream of events in between (in
 * workerd every JS stream hop costs a crossing into the runtime per event).
 */
export interface EventStreamReader {
  read(): Promise<ReadableStreamReadResult<UpstreamEvent>>;
  /** Stops the attempt's upstream work; a pending read ends as done. */
  cancel(reason?: unknown): Promise<void>;
}

/**
 * Something that can answer a chat request as internal events. `open` rejects with a ProxyError
 * before any event exists (so the router may fail over); afterwards failures are `error` events.
 */
export interface Upstream {
  readonly name: string;
  open(request: ChatRequest, ctx: AttemptContext): Promise<EventStreamReader>;
}
