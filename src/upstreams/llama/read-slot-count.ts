// How many slots a llama-server has, read from its own `/props` (`total_slots`, its `--parallel`):
// llama-server answers it whatever its flags (`--no-slots` included), so the admission queue can gate
// on it before the health hub's first `/slots` sample reaches the isolate.
import { fetchFresh } from "../../http/fetch-fresh.ts";
import { parseTotalSlots } from "../../health/parse-total-slots.ts";
import { llamaRootUrl } from "./llama-root-url.ts";

/**
 * The slot count of the llama-server at `baseUrl` (`model`: router mode's child), or undefined when
 * `/props` cannot be read within `timeoutMs` or tells none. Never throws.
 */
export async function readSlotCount(baseUrl: string, headers: Record<string, string>, timeoutMs: number, model?: string): Promise<number | undefined> {
  const url = llamaRootUrl(baseUrl, "/props") + (model ? `?model=${encodeURIComponent(model)}` : "");
  try {
    const res = await fetchFresh(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok || !(res.headers.get("content-type") ?? "").includes("json")) {
      await res.body?.cancel().catch(() => {});
      return undefined;
    }
    return parseTotalSlots(await res.json());
  } catch {
    return undefined;
  }
}
