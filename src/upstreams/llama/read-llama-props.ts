// What a llama-server's `/props` says about its model (context window, vision, reasoning, slots),
// cached per isolate for the model list and the admission queue.
import { fetchFresh } from "../../http/fetch-fresh.ts";
import { parseTotalSlots } from "../../health/parse-total-slots.ts";
import { llamaRootUrl } from "./llama-root-url.ts";

/** What a model list says about a llama-server's model, from its `/props`. */
export interface ModelProps {
  /** Per-slot context (`default_generation_settings.n_ctx`): the most one request can hold. */
  contextWindow?: number;
  vision: boolean;
  reasoning: boolean;
  /** `total_slots` (its `--parallel`), which the admission queue gates on before the hub's first sample. */
  slots?: number;
}

/**
 * Pure: `/props` → ModelProps. Reasoning is the template's `supports_reasoning` capability where the
 * server reports one, else whether the template handles reasoning at all (it renders
 * `reasoning_content`, `<think>` or `enable_thinking`).
 */
export function parseLlamaProps(props: unknown): ModelProps {
  const p = (props ?? {}) as {
    default_generation_settings?: { n_ctx?: unknown };
    n_ctx?: unknown;
    modalities?: { vision?: unknown };
    chat_template_caps?: Record<string, unknown>;
    chat_template?: unknown;
  };
  const nCtx = p.default_generation_settings?.n_ctx ?? p.n_ctx;
  const caps = p.chat_template_caps ?? {};
  const template = typeof p.chat_template === "string" ? p.chat_template : "";
  const reasoning =
    typeof caps.supports_reasoning === "boolean"
      ? caps.supports_reasoning
      : caps.supports_preserve_reasoning === true || /reasoning_content|<think>|enable_thinking/.test(template);
  const slots = parseTotalSlots(props);
  return {
    ...(typeof nCtx === "number" && nCtx > 0 ? { contextWindow: nCtx } : {}),
    vision: p.modalities?.vision === true,
    reasoning,
    ...(slots !== undefined ? { slots } : {}),
  };
}

// Per isolate, per server and model: a model's context and template change only when its server
// restarts, and a model list must not wait on /props every time.
const TTL_MS = 60_000;
const cache = new Map<string, { at: number; props: Promise<ModelProps | null> }>();

/**
 * A llama-server's ModelProps (`model` for router mode's `?model=`), or null when /props cannot be
 * read within `timeoutMs` (the fields are then left out). Failures are cached like answers.
 */
export function readLlamaProps(baseUrl: string, headers: Record<string, string>, timeoutMs: number, model?: string): Promise<ModelProps | null> {
  const key = `${baseUrl}\u0000${model ?? ""}`;
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < TTL_MS) return hit.props;
  // `autoload=false`: on a router, asking a model's /props would otherwise load it (evicting another).
  const url = llamaRootUrl(baseUrl, "/props") + (model ? `?model=${encodeURIComponent(model)}&autoload=false` : "");
  const props = fetchFresh(url, { headers, signal: AbortSignal.timeout(timeoutMs) }).then(
    async (res) => {
      if (!res.ok) {
        await res.body?.cancel();
        return null;
      }
      return parseLlamaProps(await res.json());
    },
    () => null,
  ).catch(() => null);
  cache.set(key, { at: Date.now(), props });
  return props;
}
