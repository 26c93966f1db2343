// Exact token counts from a llama-server (its template, then its tokenizer): for count_tokens, and
// for the prefill of an answer continued there.
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { LlamaTarget } from "../../config/config-schema.ts";
import { buildLlamaBody } from "./build-llama-body.ts";
import { detectToolMode } from "./detect-tool-mode.ts";
import { llamaHeaders } from "./llama-wire.ts";
import { badLlamaAnswer, postLlamaJson, renderLlamaPrompt, type JsonCallContext } from "./render-llama-prompt.ts";

/** Each of the two calls must answer within `timeoutMs`. */
export type CountContext = JsonCallContext;

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
  const prompt = await renderLlamaPrompt(target, name, built, headers, ctx);
  return tokenize(target, name, built.model, prompt, true, headers, ctx);
}

/** The tokens `text` is on one llama-server, as a part of a prompt (no BOS added): `/tokenize` alone. */
export async function countTextTokens(target: LlamaTarget, name: string, text: string, ctx: CountContext): Promise<number> {
  return tokenize(target, name, target.model, text, false, llamaHeaders(target, name, ctx, "application/json"), ctx);
}

async function tokenize(target: LlamaTarget, name: string, model: unknown, content: string, addSpecial: boolean, headers: Record<string, string>, ctx: CountContext): Promise<number> {
  const { tokens } = await postLlamaJson<{ tokens?: unknown }>(target, name, "/tokenize", { ...(model !== undefined ? { model } : {}), content, add_special: addSpecial }, headers, ctx);
  if (!Array.isArray(tokens)) throw badLlamaAnswer(name, "/tokenize", "no tokens");
  return tokens.length;
}

function authOnly(headers: Record<string, string>): Record<string, string> {
  return headers.authorization ? { authorization: headers.authorization } : {};
}
