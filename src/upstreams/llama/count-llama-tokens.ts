import { ProxyError } from "../../errors/proxy-error.ts";
import { fetchFresh } from "../../http/fetch-fresh.ts";
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { LlamaTarget } from "../../config/config-schema.ts";
import type { EnvVars } from "../../config/env-vars.ts";
import { buildLlamaBody } from "./build-llama-body.ts";
import { detectToolMode } from "./detect-tool-mode.ts";
import { mapLlamaError } from "./map-llama-error.ts";
import { llamaRootUrl } from "./llama-root-url.ts";
import { llamaHeaders } from "./post-llama.ts";

export interface CountContext {
  env: EnvVars;
  requestId: string;
  /** Each of the two calls must answer within this. */
  timeoutMs: number;
  signal?: AbortSignal;
}

// What llama-server's /apply-template reads to render the prompt. Sampling fields (a `grammar`
// beside tools is refused there as in chat) do not change the prompt.
const TEMPLATE_FIELDS = ["model", "messages", "tools", "tool_choice", "parallel_tool_calls", "chat_template_kwargs", "reasoning_format", "add_generation_prompt"];

/**
 * The prompt tokens a chat request is on one llama-server: the body the chat would send (tool-call
 * ids, a named tool_choice, prompt mode for templates without tool calls), rendered by
 * `/apply-template`, then counted by `/tokenize` with `add_special: true`, as the completion path
 * tokenizes a prompt (so a BOS the vocab adds is counted). Image parts count as their placeholder.
 */
export async function countLlamaTokens(target: LlamaTarget, name: string, request: ChatRequest, ctx: CountContext): Promise<number> {
  const headers = llamaHeaders(target, name, ctx, "application/json");
  const toolMode = request.tools?.length ? (target.tools ?? (await detectToolMode(target.url, authOnly(headers), ctx.timeoutMs))) : "native";
  const built = buildLlamaBody(request, target, toolMode);
  const body: Record<string, unknown> = {};
  for (const key of TEMPLATE_FIELDS) if (built[key] !== undefined) body[key] = built[key];

  const { prompt } = await postJson<{ prompt?: unknown }>(target, name, "/apply-template", body, headers, ctx);
  if (typeof prompt !== "string") throw badAnswer(name, "/apply-template", "no prompt");
  return tokenize(target, name, body.model, prompt, true, headers, ctx);
}

/** The tokens `text` is on one llama-server, as a part of a prompt (no BOS added): `/tokenize` alone. */
export async function countTextTokens(target: LlamaTarget, name: string, text: string, ctx: CountContext): Promise<number> {
  return tokenize(target, name, target.model, text, false, llamaHeaders(target, name, ctx, "application/json"), ctx);
}

async function tokenize(target: LlamaTarget, name: string, model: unknown, content: string, addSpecial: boolean, headers: Record<string, string>, ctx: CountContext): Promise<number> {
  const { tokens } = await postJson<{ tokens?: unknown }>(target, name, "/tokenize", { ...(model !== undefined ? { model } : {}), content, add_special: addSpecial }, headers, ctx);
  if (!Array.isArray(tokens)) throw badAnswer(name, "/tokenize", "no tokens");
  return tokens.length;
}

async function postJson<T>(target: LlamaTarget, name: string, path: string, body: unknown, headers: Record<string, string>, ctx: CountContext): Promise<T> {
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
    throw badAnswer(name, path, "a body that is not JSON");
  }
}

function badAnswer(name: string, path: string, what: string): ProxyError {
  return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${name} answered ${path} with ${what}.` });
}

function authOnly(headers: Record<string, string>): Record<string, string> {
  return headers.authorization ? { authorization: headers.authorization } : {};
}
