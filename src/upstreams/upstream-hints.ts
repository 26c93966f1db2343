// What an upstream said of its own failure (its Retry-After, its HTTP status), kept beside the error
// for routing's retry and health decisions, apart from what the client is told.
import type { ProxyError } from "../errors/proxy-error.ts";

/**
 * An upstream's own `Retry-After` (milliseconds), attached by the adapter to the error it threw.
 * Kept apart from `ProxyError.retryAfter`, which is Switchyard's advice to its client.
 */
const upstreamRetryAfter = new WeakMap<ProxyError, number>();

export function setUpstreamRetryAfter(err: ProxyError, ms: number | undefined): ProxyError {
  if (ms !== undefined) upstreamRetryAfter.set(err, ms);
  return err;
}

export function getUpstreamRetryAfter(err: ProxyError): number | undefined {
  return upstreamRetryAfter.get(err);
}

/** The upstream's HTTP status behind an error, when it answered at all. */
const upstreamStatus = new WeakMap<ProxyError, number>();

export function setUpstreamStatus(err: ProxyError, status: number): ProxyError {
  upstreamStatus.set(err, status);
  return err;
}

export function getUpstreamStatus(err: ProxyError): number | undefined {
  return upstreamStatus.get(err);
}
