// Who follows an answer's events as the responders encode them (the request log's facts): called in
// line with the encoding, never awaited, so following an answer costs no promise per event.
import type { ProxyError } from "../errors/proxy-error.ts";
import type { UpstreamEvent } from "../events/events.ts";

/** How an answer's delivery ended: its events all went out, the client left, or it failed before its first event. */
export type AnswerEnd = "done" | "client_gone" | { error: ProxyError | unknown };

export interface AnswerObserver {
  /** An event on its way to the encoder, in order (the first one included). */
  event(e: UpstreamEvent): void;
  /** The delivery is over (called once; later calls are ignored by the observer). */
  end(how: AnswerEnd): void;
}
