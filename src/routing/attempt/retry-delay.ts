// How long to wait before retrying the same target, or whether to move on to the next one instead.
export interface RetryPolicy {
  perTarget: number;
  maxAttempts: number;
  backoffMs: number;
  maxBackoffMs: number;
  maxRetryAfterMs: number;
}

/**
 * How long to wait before trying the same target again (its `retry`-th retry, from 1), or null to
 * move on to the next target instead: an upstream's Retry-After is honoured as given when it is
 * short enough, otherwise the delay doubles from `backoffMs` up to `maxBackoffMs`, with jitter in its
 * upper half so isolates that failed together do not return together.
 */
export function retryDelayMs(retry: number, retryAfterMs: number | undefined, policy: RetryPolicy, random: () => number = Math.random): number | null {
  if (retryAfterMs !== undefined) return retryAfterMs <= policy.maxRetryAfterMs ? retryAfterMs : null;
  const exp = Math.min(policy.maxBackoffMs, policy.backoffMs * 2 ** Math.max(0, retry - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}
