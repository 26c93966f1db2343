/** An error as plain data: what an `error` event carries and every error body is written from. */
export interface ErrorInfo {
  status: number;
  type: string;
  code: string;
  message: string;
  param?: string | null;
  /** Seconds for `Retry-After`. */
  retryAfter?: number;
  /** Another target may still succeed: failover is allowed if nothing was sent yet. */
  retryable?: boolean;
  /** See ProxyError.unparsed. */
  unparsed?: boolean;
}

/** One target's last answer to a request that failed everywhere (`x-switchyard-outcomes`). */
export interface TargetOutcome {
  /** The client-facing target name (`targetName()`), as in `x-switchyard-target`. */
  target: string;
  code: string;
  status: number;
  /** Not an attempt: the target cannot take this kind of request at all (see `TryOptions.skips`). */
  skipped?: true;
}

/**
 * An error the proxy answers with. Carries everything the OpenAI envelope needs, so callers branch
 * on data (`code`, `retryable`), never on message text.
 */
export class ProxyError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  /** Seconds for `Retry-After`, when the client should come back later. */
  readonly retryAfter?: number;
  /** Whether another target may still succeed (failover), as opposed to a mistake in the request. */
  readonly retryable: boolean;
  /**
   * The target is there but every slot or queue of it is taken (not absent, not broken): a request
   * refused this way waits in the admission queue for a turn rather than being answered at once.
   */
  readonly busy: boolean;
  /**
   * llama-server generated the answer and then refused it: its chat parser could not read the
   * model's output in the template's format. The server is fine and so was the generation, so the
   * same server may still be asked for the raw text (LlamaRawUpstream) or to continue the answer.
   */
  readonly unparsed: boolean;
  /** How many targets were tried before this error was final (for `x-switchyard-attempts`). */
  attempts?: number;
  /** Every target's last answer, in the order tried, when this error ended a request that tried targets. */
  outcomes?: TargetOutcome[];
  /**
   * What the upstream said of its own failure, set by the adapter that read its answer, for routing's
   * retry and health decisions and never told to the client: its HTTP status, when it answered at all…
   */
  upstreamStatus?: number;
  /** …and its own `Retry-After` in milliseconds (apart from `retryAfter`, Switchyard's advice to its client). */
  upstreamRetryAfterMs?: number;
  /**
   * A timeout the request's own `timeouts.totalMs` caused (set where the deadline fired: the event
   * reader), not the upstream stalling: src/health/classify-failure.ts's "deadline".
   */
  readonly ownDeadline: boolean;

  constructor(init: {
    status: number;
    type?: string;
    code: string;
    message: string;
    param?: string | null;
    retryAfter?: number;
    retryable?: boolean;
    busy?: boolean;
    unparsed?: boolean;
    ownDeadline?: boolean;
  }) {
    super(init.message);
    this.name = "ProxyError";
    this.status = init.status;
    this.type = init.type ?? defaultType(init.status);
    this.code = init.code;
    this.param = init.param ?? null;
    this.retryAfter = init.retryAfter;
    this.retryable = init.retryable ?? false;
    this.busy = init.busy ?? false;
    this.unparsed = init.unparsed ?? false;
    this.ownDeadline = init.ownDeadline ?? false;
  }

  toInfo(): ErrorInfo {
    return {
      status: this.status,
      type: this.type,
      code: this.code,
      message: this.message,
      param: this.param,
      ...(this.retryAfter !== undefined ? { retryAfter: this.retryAfter } : {}),
      retryable: this.retryable,
      ...(this.unparsed ? { unparsed: true } : {}),
    };
  }

  static fromInfo(info: ErrorInfo): ProxyError {
    return new ProxyError(info);
  }
}

function defaultType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "invalid_request_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return status === 503 ? "unavailable_error" : "api_error";
  return "invalid_request_error";
}

/** The error of a request whose client left before its answer (499): its upstream work stops. */
export function clientClosed(): ProxyError {
  return new ProxyError({ status: 499, code: "client_closed_request", message: "The client closed the request." });
}
