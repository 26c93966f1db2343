// The prompt a llama-server's own template makes of a chat body (`/apply-template`), and the short
// JSON calls to its own routes that token counting shares.
import { ProxyError } from "../../errors/proxy-error.ts";
import { fetchFresh } from "../../http/fetch-fresh.ts";
import type { LlamaTarget } from "../../config/config-schema.ts";
import type { EnvVars } from "../../config/env-vars.ts";
import { mapLlamaError } from "./map-llama-error.ts";
import { llamaRootUrl } from "./llama-root-url.ts";

/** A short JSON call to one of llama-server's own routes (`/apply-template`, `/tokenize`). */
export interface JsonCallContext {
  env: EnvVars;
  requestId: string;
  /** The call must answer within this. */
  timeoutMs: number;
  signal?: AbortSignal;
}

// What llama-server's /apply-template reads to render the prompt. Sampling fields (a `grammar`
// beside tools is refused there as in chat) do not change the prompt.
const TEMPLATE_FIELDS = ["model", "messages", "tools", "tool_choice", "parallel_tool_calls", "chat_template_kwargs", "reasoning_format", "add_generation_prompt"];

/**
 * The prompt llama-server renders from a chat body (the one its chat endpoint would be sent), by its
 * own template: `/apply-template` with the fields that shape the prompt.
 */
export async function renderLlamaPrompt(target: LlamaTarget, name: string, chatBody: Record<string, unknown>, headers: Record<string, string>, ctx: JsonCallContext): Promise<string> {
  const body: Record<string, unknown> = {};
  for (const key of TEMPLATE_FIELDS) if (chatBody[key] !== undefined) body[key] = chatBody[key];
  const { prompt } = await postLlamaJson<{ prompt?: unknown }>(target, name, "/apply-template", body, headers, ctx);
  if (typeof prompt !== "string") throw badLlamaAnswer(name, "/apply-template", "no prompt");
  return prompt;
}

export async function postLlamaJson<T>(target: LlamaTarget, name: string, path: string, body: unknown, headers: Record<string, string>, ctx: JsonCallContext): Promise<T> {
  const signal = ctx.signal ? AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.timeoutMs)]) : AbortSignal.timeout(ctx.timeoutMs);
  let res: Response;
  try {
    res = await fetchFresh(llamaRootUrl(target.url, path), { method: "POST", headers, body: JSON.stringify(body), signal });
  } catch {
    throw new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: `Could not reach ${name} for ${path} within ${ctx.timeoutMs} ms.` });
  }
  const text = await res.text();
  if (!res.ok) throw mapLlamaError(res.status, text, res.headers.get("content-type"), name);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw badLlamaAnswer(name, path, "a body that is not JSON");
  }
}

export function badLlamaAnswer(name: string, path: string, what: string): ProxyError {
  return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${name} answered ${path} with ${what}.` });
}
