// Whether an interrupted answer may be continued on another target, and the request that asks it
// to go on from what the client already has.
import type { ChatRequest } from "../../schemas/chat-request.ts";
import { grammarAfter } from "./grammar-after.ts";

/** What an interrupted answer had sent to the client when its upstream failed. */
export interface Written {
  text: string;
  reasoning: string;
  /** Content and reasoning deltas received: llama-server sends one token per delta, so its tokens. */
  tokens: number;
}

/**
 * Why a request's answer can never be continued elsewhere, or null when it can (docs/reliability.md,
 * "Continuing an interrupted answer"):
 * - `n > 1`: the choices are interleaved, and a continuation would carry only one of them (refused
 *   today anyway, 400 unsupported_parameter; the rule stands should choices ever be served);
 * - logprobs: the tokens already sent were scored by the model that failed; a continuation cannot give
 *   the same entries, and the prefill's tokens would have none;
 * - a client prefill (the last message is the assistant's): llama-server echoes it, so where the
 *   client's text ends and the answer begins is not known;
 * - `json_schema` / `response_format`: their grammar would start over after the text already sent;
 *   only a one-literal `grammar` can be carried (grammar-after.ts).
 */
export function continuationBlocker(req: ChatRequest): string | null {
  const r = req as ChatRequest & Record<string, unknown>;
  if (typeof req.n === "number" && req.n > 1) return "n > 1";
  if (r.logprobs === true || (typeof r.top_logprobs === "number" && r.top_logprobs > 0) || (typeof r.n_probs === "number" && r.n_probs > 0)) return "logprobs";
  if (req.messages.at(-1)?.role === "assistant") return "a client prefill";
  if (r.json_schema != null) return "json_schema";
  const format = r.response_format as { type?: unknown } | null | undefined;
  if (format && typeof format === "object" && format.type !== "text") return "response_format";
  if (typeof r.grammar === "string" && grammarAfter(r.grammar, "") === null) return "a grammar that is not one literal";
  if (r.grammar != null && typeof r.grammar !== "string") return "grammar";
  return null;
}

/**
 * The request that asks another target to continue: the same request with what was written as a
 * trailing assistant message (a `--jinja` llama-server continues it as an open turn), its token
 * budget less what was spent, and a one-literal grammar cut to what remains. Null when nothing can
 * follow: nothing written yet, the budget spent, or the text left the grammar's literal.
 */
export function continuationRequest(req: ChatRequest, written: Written): ChatRequest | null {
  if (written.text === "") return null;
  const out: ChatRequest & Record<string, unknown> = {
    ...req,
    messages: [...req.messages, { role: "assistant", content: written.text, ...(written.reasoning ? { reasoning_content: written.reasoning } : {}) }],
  };
  // llama-server reads n_predict before max_tokens (the meter bounds both): each budget the request
  // carries is what the continuation may still spend, or a continued answer would run past its bound.
  for (const field of ["max_tokens", "max_completion_tokens", "n_predict"] as const) {
    const budget = (req as Record<string, unknown>)[field];
    if (typeof budget !== "number") continue;
    if (budget - written.tokens <= 0) return null;
    out[field] = budget - written.tokens;
  }
  const grammar = (req as Record<string, unknown>).grammar;
  if (typeof grammar === "string") {
    const rest = grammarAfter(grammar, written.text);
    if (rest === null) return null;
    out.grammar = rest;
  }
  return out;
}
