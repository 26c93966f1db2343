/**
 * `fetch` that survives a stale pooled connection. workerd reuses keep-alive connections, and
 * llama-server closes them after a stream; a request sent on such a connection fails with "Network
 * connection lost" before any response. The request never started, so one immediate retry on a
 * fresh connection is safe. Any other failure (or an abort) is thrown as is.
 */
export async function fetchFresh(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (e) {
    if (init.signal?.aborted || !isStaleConnection(e)) throw e;
    return fetch(url, init);
  }
}

function isStaleConnection(e: unknown): boolean {
  return /network connection lost|other side closed|connection reset|socket hang up|ECONNRESET/i.test(e instanceof Error ? e.message : String(e));
}
