// A serving page's `usage`, checked before anyone is charged for it: the page is a teammate's tab, and
// the tokens it reports are spent from the asking key's day. What the hub saw of the request and its
// answer bounds what the page may claim; a claim outside the bounds is replaced by Switchyard's own
// count (pure: the SessionHub keeps the tally and tells the page, docs/relay-protocol.md "notice").

import type { Endpoint, PageMessage } from "../../schemas/relay.ts";

/**
 * The most tokens a character can be: a byte-level tokenizer spends one token per UTF-8 byte, and a
 * UTF-16 unit is at most three of them.
 */
const TOKENS_PER_CHAR = 3;
/** Room for what the chat template adds around the messages (roles, markers, a default system prompt). */
const TEMPLATE_TOKENS = 512;
/** Tokens that print nothing (end of turn, a special token) on top of what the chunks show. */
const SILENT_TOKENS = 16;

/** What the hub knows of one relayed request, and has seen of its answer so far. */
export interface RelayTally {
  endpoint: Endpoint;
  /** Characters of the whole request message the page received (everything that can reach the prompt). */
  requestChars: number;
  /** Characters of its prompt alone (messages, prompt or input as JSON): Switchyard's own estimate starts here. */
  promptChars: number;
  /** The request's `max_tokens`, when it set one. */
  maxTokens?: number;
  /** Characters of answer text relayed so far, and the chunks that carried any. */
  completionChars: number;
  pieces: number;
}

export function newTally(endpoint: Endpoint, text: string, body: Record<string, unknown>): RelayTally {
  const prompt = body.messages ?? body.prompt ?? body.input ?? "";
  const max = body.max_tokens;
  return {
    endpoint,
    requestChars: text.length,
    promptChars: typeof prompt === "string" ? prompt.length : JSON.stringify(prompt).length,
    ...(typeof max === "number" && Number.isSafeInteger(max) && max >= 0 ? { maxTokens: max } : {}),
    completionChars: 0,
    pieces: 0,
  };
}

/** Counts the answer text of one chunk (`choices[0]`'s `delta.content` or `text`) into the tally. */
export function tallyChunk(t: RelayTally, data: Record<string, unknown>): void {
  const choices = data.choices;
  if (!Array.isArray(choices)) return;
  for (const choice of choices as Array<Record<string, unknown>>) {
    if ((choice.index ?? 0) !== 0) continue;
    const delta = choice.delta as Record<string, unknown> | undefined;
    const n = (typeof choice.text === "string" ? choice.text.length : 0) + (typeof delta?.content === "string" ? delta.content.length : 0);
    if (n > 0) {
      t.completionChars += n;
      t.pieces++;
    }
  }
}

/** Switchyard's own count, as the Meter estimates an answer without usage: about four characters a token. */
export function ownUsage(t: RelayTally): { prompt_tokens: number; completion_tokens: number } {
  const estimate = (chars: number) => (chars <= 0 ? 0 : Math.ceil(chars / 4));
  return { prompt_tokens: estimate(t.promptChars), completion_tokens: t.endpoint === "embeddings" ? 0 : Math.max(t.pieces, estimate(t.completionChars)) };
}

/** The most tokens the page may claim for the prompt and for the answer, given what was asked and sent. */
export function usageBounds(t: RelayTally, contextWindow?: number): { prompt: number; completion: number } {
  const window = contextWindow ?? Infinity;
  const prompt = Math.min(window, TOKENS_PER_CHAR * t.requestChars + TEMPLATE_TOKENS);
  const completion = Math.min(window, t.maxTokens ?? Infinity, TOKENS_PER_CHAR * t.completionChars + t.pieces + SILENT_TOKENS);
  return { prompt, completion };
}

export type UsageCheck = { ok: true } | { ok: false; usage: Record<string, unknown>; problem: string };

/**
 * Pure: a page's `usage` (from a chunk or from `done`) against the bounds. Each count must be a
 * non-negative integer within its bound; a count that is not is replaced by Switchyard's own (the
 * others are kept), and `problem` says which and why, for the page. Absent usage (undefined, null)
 * is fine: the Worker then estimates by itself.
 */
export function checkRelayUsage(usage: unknown, t: RelayTally, contextWindow?: number): UsageCheck {
  if (usage === undefined || usage === null) return { ok: true };
  const own = ownUsage(t);
  const bounds = usageBounds(t, contextWindow);
  if (typeof usage !== "object" || Array.isArray(usage)) return { ok: false, usage: withTotal(own, t), problem: "usage must be an object" };
  const given = usage as Record<string, unknown>;
  const problems: string[] = [];
  const fixed: Record<string, unknown> = { ...given };
  const fields: Array<["prompt_tokens" | "completion_tokens", number]> = [["prompt_tokens", bounds.prompt]];
  if (t.endpoint !== "embeddings") fields.push(["completion_tokens", bounds.completion]);
  for (const [field, bound] of fields) {
    const problem = countProblem(given[field], bound);
    if (!problem) continue;
    problems.push(`usage.${field} ${problem}`);
    fixed[field] = own[field];
  }
  if (problems.length === 0) return { ok: true };
  const counted = { prompt_tokens: fixed.prompt_tokens as number, completion_tokens: (fixed.completion_tokens as number | undefined) ?? 0 };
  return { ok: false, usage: { ...fixed, ...withTotal(counted, t) }, problem: problems.join("; ") };
}

/**
 * The line to pass on for a page's `chunk` or `done`: `raw`, as sent, unless the usage it carries is
 * outside what the request allows; then rebuilt with Switchyard's own count, and `notice` tells the
 * page why (docs/relay-protocol.md "notice").
 */
export function usageCheckedLine(msg: Extract<PageMessage, { type: "chunk" | "done" }>, raw: string, t: RelayTally, contextWindow?: number): { line: string; notice?: string } {
  const usage = msg.type === "chunk" ? (msg.data as Record<string, unknown>).usage : msg.usage;
  if (usage === undefined || usage === null) return { line: raw };
  const check = checkRelayUsage(usage, t, contextWindow);
  if (check.ok) return { line: raw };
  const rebuilt = msg.type === "chunk" ? { ...msg, data: { ...msg.data, usage: check.usage } } : { ...msg, usage: check.usage };
  const notice = `${check.problem}. Switchyard counted this request itself (${String(check.usage.prompt_tokens)} prompt and ${String(check.usage.completion_tokens ?? 0)} completion tokens): send web-llm's usage unchanged.`;
  return { line: JSON.stringify(rebuilt), notice };
}

/** Why `value` is not a token count within `bound`, or null when it is one. */
function countProblem(value: unknown, bound: number): string | null {
  if (typeof value !== "number") return `must be a number, not ${value === undefined ? "missing" : value === null ? "null" : typeof value}`;
  if (!Number.isSafeInteger(value) || value < 0) return "must be a non-negative integer";
  if (value > bound) return `is more than the request can have used (at most ${bound})`;
  return null;
}

function withTotal(u: { prompt_tokens: number; completion_tokens: number }, t: RelayTally): Record<string, number> {
  // Embeddings count only the input; their total is the prompt.
  if (t.endpoint === "embeddings") return { prompt_tokens: u.prompt_tokens, total_tokens: u.prompt_tokens };
  return { ...u, total_tokens: u.prompt_tokens + u.completion_tokens };
}
