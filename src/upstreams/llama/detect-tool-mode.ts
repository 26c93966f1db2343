// Whether a llama-server's template can call tools or needs prompt mode (current builds drop tools
// silently when it cannot), read from `/props` and cached.
import { fetchFresh } from "../../http/fetch-fresh.ts";

export type ToolMode = "native" | "prompt";

// Per-isolate cache of each server's template capability: it only changes when the server restarts
// with another model, so a minute is plenty and keeps the /props call off nearly every request.
const TTL_MS = 60_000;
const cache = new Map<string, { mode: ToolMode; at: number }>();

/**
 * Whether a llama-server's chat template can call tools (`/props` `chat_template_caps.
 * supports_tool_calls`). Without that, current builds drop `tools` silently, so the proxy must use
 * prompt mode. If /props cannot be read, native is assumed (the server then reports its own error).
 */
export async function detectToolMode(baseUrl: string, headers: HeadersInit, timeoutMs: number): Promise<ToolMode> {
  const hit = cache.get(baseUrl);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.mode;
  let mode: ToolMode = "native";
  try {
    const res = await fetchFresh(`${baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "")}/props`, { headers, signal: AbortSignal.timeout(Math.min(timeoutMs, 5000)) });
    if (res.ok) {
      const props = (await res.json()) as { chat_template_caps?: { supports_tool_calls?: boolean } };
      if (props.chat_template_caps?.supports_tool_calls === false) mode = "prompt";
    } else {
      await res.body?.cancel();
    }
  } catch {
    // Unreachable or slow: the chat request itself will report it.
  }
  cache.set(baseUrl, { mode, at: Date.now() });
  return mode;
}
