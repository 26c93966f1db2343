// A pause that a departing client cuts short: the attempt loop's backoff and its looks for a server
// coming back wait on it, and stop waiting the moment the request's signal aborts.

/** Waits `ms` unless the client leaves first (false). */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
