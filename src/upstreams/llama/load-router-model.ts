// Asks a llama-server router to load a model (`POST /models/load`): how Switchyard puts back a model
// the router evicted for a load that then failed.
import { fetchFresh } from "../../http/fetch-fresh.ts";
import { llamaRootUrl } from "./llama-root-url.ts";

/** Starts loading `model` on the router; whether it accepted. Never throws. */
export async function loadRouterModel(baseUrl: string, headers: Record<string, string>, model: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetchFresh(llamaRootUrl(baseUrl, "/models/load"), {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ model }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel().catch(() => {});
    return res.ok;
  } catch {
    return false;
  }
}
