// The body sent to llama-server for a chat request, with llama.cpp's known gaps repaired.
import type { ChatRequest } from "../../schemas/chat-request.ts";
import type { LlamaTarget } from "../../config/config-schema.ts";
import { applyPromptMode } from "../../toolcalls/prompt/apply-prompt-mode.ts";

/**
 * The body sent to llama-server for a chat request. Every field the client sent is kept (llama.cpp
 * reads many extensions), then llama.cpp's known gaps are repaired:
 * - it always streams and always reports usage: non-stream answers are aggregated by the proxy, so a
 *   departed client is noticed and a late failure is still reported;
 * - a named `tool_choice` is silently read as `auto` by llama-server, so it becomes "only that tool,
 *   required";
 * - history tool calls without `type` make it answer 500;
 * - Mistral templates reject tool-call ids that are not 9 alphanumerics: ids are mapped, the same way
 *   in assistant and tool messages.
 */
export function buildLlamaBody(
  req: ChatRequest,
  target: Pick<LlamaTarget, "model" | "strip" | "set">,
  toolMode: "native" | "prompt" = "native",
): Record<string, unknown> {
  const body: Record<string, unknown> = { ...req };
  body.model = target.model ?? req.model;
  body.stream = true;
  body.stream_options = { ...(req.stream_options ?? {}), include_usage: true };
  if (req.max_completion_tokens != null && req.max_tokens == null) body.max_tokens = req.max_completion_tokens;

  const choice = req.tool_choice;
  if (choice && typeof choice === "object" && req.tools) {
    body.tools = req.tools.filter((t) => t.function.name === choice.function.name);
    body.tool_choice = "required";
  }

  const ids = new IdMapper();
  body.messages = req.messages.map((m) => {
    let msg: Record<string, unknown> = m;
    if (m.tool_calls) {
      msg = {
        ...m,
        tool_calls: m.tool_calls.map((tc) => ({ ...tc, type: tc.type ?? "function", ...(tc.id !== undefined ? { id: ids.map(tc.id) } : {}) })),
      };
    }
    if (m.role === "tool" && m.tool_call_id !== undefined) msg = { ...msg, tool_call_id: ids.map(m.tool_call_id) };
    return msg;
  });

  if (toolMode === "prompt" && (req.tools || req.tool_choice)) applyPromptMode(body, req);

  for (const key of target.strip ?? []) delete body[key];
  for (const [key, value] of Object.entries(target.set ?? {})) body[key] = value;
  return body;
}

const ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** Maps tool-call ids to 9 alphanumerics, deterministically and without collisions in one request. */
class IdMapper {
  private readonly seen = new Map<string, string>();
  private readonly used = new Set<string>();

  map(id: string): string {
    const known = this.seen.get(id);
    if (known) return known;
    let out = /^[A-Za-z0-9]{9}$/.test(id) ? id : hash9(id);
    for (let salt = 1; this.used.has(out); salt++) out = hash9(`${id}#${salt}`);
    this.seen.set(id, out);
    this.used.add(out);
    return out;
  }
}

function hash9(s: string): string {
  // Two 32-bit FNV-1a lanes give 9 well-spread characters; determinism matters, not secrecy.
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  let out = "";
  for (let i = 0; i < 9; i++) {
    const lane = i % 2 === 0 ? h1 : h2;
    out += ALNUM[(lane >>> ((i * 3) % 24)) % 62];
  }
  return out;
}
