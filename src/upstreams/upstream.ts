// What routing asks of an upstream: a chat request opened as internal events under the attempt's
// context, and the error for a target that cannot serve at all.
import { ProxyError } from "../errors/proxy-error.ts";
import type { EnvVars } from "../config/env-vars.ts";
import type { Deadlines } from "../lib/deadlines.ts";
import type { ChatRequest } from "../schemas/chat-request.ts";
import type { EventStreamReader } from "../events/event-source.ts";

export interface AttemptContext {
  requestId: string;
  /** The id the client sent for its request, when valid: sent upstream as x-client-request-id beside Switchyard's x-request-id. */
  clientRequestId?: string;
  /** Aborted when the client leaves or the attempt is abandoned; the upstream work must stop. */
  signal: AbortSignal;
  /** Until upstream headers. */
  responseStartMs: number;
  /** The request's timer (src/lib/deadlines.ts), for the attempt's own deadlines. */
  deadlines: Deadlines;
  env: EnvVars;
  /**
   * The prompt's hashes at each message boundary, shortest first (routing's placement), for an
   * upstream that chooses among engines itself: the browser hub sends a conversation to the session
   * whose engine still holds it.
   */
  promptChain?: readonly string[];
  /** The prompt's tokens at least (routing's low estimate), for an upstream that knows its engines' context windows. */
  promptTokens?: number;
  /**
   * The id of the key the request was made with (never the key itself); absent without one. A browser
   * hub places the request only on sessions allowed to serve that key.
   */
  keyId?: string;
  /** The W3C `traceparent` of this attempt's span (src/observability/), sent upstream; absent when traces are off. */
  traceparent?: string;
}

/**
 * Something that can answer a chat request as internal events. `open` rejects with a ProxyError
 * before any event exists (so the router may fail over); afterwards failures are `error` events.
 */
export interface Upstream {
  readonly name: string;
  open(request: ChatRequest, ctx: AttemptContext): Promise<EventStreamReader>;
  /**
   * The same server without its chat parser, once `open` has reached it: for an answer the parser
   * generated and then refused (ProxyError.unparsed). Absent when the upstream parses nothing.
   */
  withoutChatParser?(): RawTextUpstream | undefined;
}

/** An upstream whose text events are the model's output as written, markers and all. */
export interface RawTextUpstream extends Upstream {
  /** Known once `open` resolved: the end of the prompt the output continues (RewriteOptions.generationPrompt). */
  readonly generationPrompt: string | undefined;
}

/**
 * The target cannot serve this endpoint at all right now (a browser target with no session serving
 * the model for it): routing skips it rather than trying it, and its error is the answer only when
 * no target was tried.
 */
export class TargetUnableError extends ProxyError {}
