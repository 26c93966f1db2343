// Pure limit arithmetic, shared by the KeyGate Durable Object and its tests.

export const WINDOW_MS = 60_000;
/** A hold (a request's slot and its token reservation) lives this long unless renewed; a dead isolate's hold frees itself after it. */
export const LEASE_TTL_MS = 60_000;
/** How often a running request renews its hold. */
export const LEASE_RENEW_MS = 20_000;

export interface KeyLimits {
  /** Requests per minute (sliding window). */
  rpm?: number;
  /** Requests running on a model at once (generating, stream or not, and embeddings). */
  concurrency?: number;
  /** Prompt + completion tokens per UTC day, reserved at admission and settled at the end. */
  tokensPerDay?: number;
  /**
   * With `tokensPerDay`: the max_tokens of a request that sets none (reserved, and sent upstream as
   * its bound); default the deployment's `limits.defaultMaxTokens`.
   */
  defaultMaxTokens?: number;
}

export interface GateState {
  /**
   * Admission times inside the last minute, oldest first: all of them, or (with `hitCount`) only the
   * rpm-th newest when there are at least rpm (all that a decision reads), else none.
   */
  hits: number[];
  /** How many admissions the last minute holds, when `hits` does not list them all. */
  hitCount?: number;
  /** Live (unexpired) holds: the requests running on a model, each a concurrency slot. */
  leases: number;
  /** Tokens charged today. */
  tokensToday: number;
  /** Tokens reserved today by the requests still running (their holds). */
  reserved?: number;
}

export type Admission =
  | { ok: true }
  | { ok: false; code: "rate_limit_exceeded" | "concurrency_limit_exceeded" | "tokens_per_day_exceeded"; retryAfter: number; message: string };

/** Whether one more request may start; checked in the order tokens/day, rpm, concurrency. */
export function decideAdmission(state: GateState, limits: KeyLimits, now: number, wantsLease: boolean): Admission {
  return dayRefusal(state, limits, now, 0) ?? rpmRefusal(state, limits, now) ?? (wantsLease ? slotRefusal(state, limits) : null) ?? { ok: true };
}

function rpmRefusal(state: GateState, limits: KeyLimits, now: number): Admission | null {
  if (limits.rpm === undefined || (state.hitCount ?? state.hits.length) < limits.rpm) return null;
  // The rpm-th newest admission: once it leaves the window, one more fits.
  const oldest = (state.hitCount !== undefined ? state.hits[0] : state.hits[state.hits.length - limits.rpm])!;
  return {
    ok: false,
    code: "rate_limit_exceeded",
    retryAfter: Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000)),
    message: `This key is limited to ${limits.rpm} requests per minute.`,
  };
}

/** The refusal of one more hold (a concurrency slot) when the key's are all taken, or null. */
export function slotRefusal(state: GateState, limits: KeyLimits): Admission | null {
  if (limits.concurrency === undefined || state.leases < limits.concurrency) return null;
  return {
    ok: false,
    code: "concurrency_limit_exceeded",
    retryAfter: 1,
    message: `This key is limited to ${limits.concurrency} concurrent requests running on a model; wait for one to finish.`,
  };
}

/** A key's day is far from its limit while this many tokens are still unreserved and uncharged. */
export const FAR_HEADROOM = 1_000_000;
/** The share of that headroom one admission reserves in advance: 1/64, so 64 holds at once take at most 1 − (63/64)^64 ≈ 63 % of it. */
export const FAR_SHARE = 64;

/**
 * Tokens an admission reserves in advance on its hold when the key's day is far from its limit, so
 * the request whose estimate fits needs no second KeyGate call to reserve (Meter.reserve): the
 * reservation is exact on the KeyGate (counted against the day like any other until it settles at
 * what was used), only larger than the request needs. 0 near the limit: there every reservation is
 * the request's own estimate, asked for when it is known.
 */
export function advanceReservation(state: GateState, limits: KeyLimits): number {
  if (limits.tokensPerDay === undefined) return 0;
  const headroom = limits.tokensPerDay - state.tokensToday - (state.reserved ?? 0);
  return headroom >= FAR_HEADROOM ? Math.floor(headroom / FAR_SHARE) : 0;
}

/**
 * The day's refusal for a request that asks to reserve `asking` tokens (0: only whether anything is
 * left), or null when it fits: what was charged today plus what the requests still running reserved
 * plus `asking` must stay within `tokensPerDay`. Retry-After is short when the running requests'
 * reservations are what stands in the way (they settle at what they used), else midnight UTC.
 */
export function dayRefusal(state: GateState, limits: KeyLimits, now: number, asking: number): Admission | null {
  const limit = limits.tokensPerDay;
  if (limit === undefined) return null;
  const reserved = state.reserved ?? 0;
  const committed = state.tokensToday + reserved;
  if (asking > 0 ? committed + asking <= limit : committed < limit) return null;
  const left = Math.max(0, limit - state.tokensToday);
  if (state.tokensToday >= limit) {
    return { ok: false, code: "tokens_per_day_exceeded", retryAfter: secondsUntilNextDay(now), message: `This key has used its ${limit} tokens for today (UTC); it resets at midnight UTC.` };
  }
  const wanted = asking > 0 ? `This request may use up to ${asking} tokens (its prompt, estimated, and its max_tokens) and ` : "";
  if (reserved > 0 && (asking > 0 ? state.tokensToday + asking <= limit : true)) {
    return {
      ok: false,
      code: "tokens_per_day_exceeded",
      retryAfter: 1,
      message: `${wanted}this key's requests still running have reserved ${reserved} of the ${left} tokens left of its ${limit} for today (UTC). Retry when one finishes${asking > 0 ? ", or lower max_tokens" : ""}.`,
    };
  }
  return {
    ok: false,
    code: "tokens_per_day_exceeded",
    retryAfter: secondsUntilNextDay(now),
    message: `${wanted}this key has ${left} of its ${limit} tokens left for today (UTC). Lower max_tokens to fit, or wait until midnight UTC.`,
  };
}

/** What a request may say about its output's length: OpenAI's two names, and llama-server's own. */
export interface OutputBound {
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  /** llama-server reads this before max_tokens; -1 is "no limit". */
  n_predict?: unknown;
}

/**
 * A request's output bound: the largest of the bounds it sends (max_tokens, max_completion_tokens,
 * llama-server's n_predict when it is a count), or undefined if it sets none.
 */
export function requestedMaxTokens(request: OutputBound): number | undefined {
  const asked = [request.max_tokens, request.max_completion_tokens, request.n_predict].filter(isCount);
  return asked.length ? Math.max(...asked) : undefined;
}

/**
 * What a request reserves from its key's day: its prompt (estimated from its characters) plus what it
 * may generate, once per generation it may run (a tool-call policy retry generates again; so does a
 * continuation or raw replay after a server's chat parser refused an answer).
 */
export function reservationOf(promptChars: number, maxTokens: number, generations = 1): number {
  return estimateTokens(promptChars) + maxTokens * generations;
}

/**
 * An embeddings input's tokens, before the upstream counts them: each string estimated from its
 * characters (estimateTokens), each token array its length. What the request reserves from its day.
 */
export function embeddingInputTokens(input: unknown): number {
  if (typeof input === "string") return estimateTokens(input.length);
  if (!Array.isArray(input)) return 0;
  let tokens = 0;
  for (const item of input) {
    if (typeof item === "string") tokens += estimateTokens(item.length);
    else if (typeof item === "number") tokens += 1;
    else if (Array.isArray(item)) tokens += item.length;
  }
  return tokens;
}

/** `YYYY-MM-DD` in UTC. */
export function dayOf(now: number): string {
  return new Date(now).toISOString().slice(0, 10);
}

export function secondsUntilNextDay(now: number): number {
  const d = new Date(now);
  const next = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now) / 1000));
}

/** A rough token count for text that was never counted by the upstream (about four characters a token). */
export function estimateTokens(chars: number): number {
  return chars <= 0 ? 0 : Math.ceil(chars / 4);
}

export interface Observed {
  /** The upstream's own count, when a usage event arrived. */
  reported?: { promptTokens: number; completionTokens: number };
  /** Characters of the request's messages (for an estimate when nothing was reported). */
  promptChars: number;
  /** Characters and delta events generated so far. */
  completionChars: number;
  completionDeltas: number;
  /**
   * Set when the answer ended with its server's chat parser refusing it (ErrorInfo.unparsed): the
   * request's output bound. That server generated to the end (held-back text included) and told
   * neither how much nor usage, so the answer is charged at least its bound.
   */
  refusedBound?: number;
}

/**
 * What a request is charged: the upstream's count when it sent one (of whole non-negative numbers), else an estimate from what was
 * generated (an aborted or failed stream is charged what it used). A request that never reached a
 * model (no deltas, no report) is charged nothing. An answer its server's chat parser refused is
 * charged at least its bound (refusedBound).
 */
export function chargedTokens(o: Observed): { promptTokens: number; completionTokens: number } {
  const refused = o.refusedBound ?? 0;
  if (o.reported && isCount(o.reported.promptTokens) && isCount(o.reported.completionTokens)) {
    return { promptTokens: o.reported.promptTokens, completionTokens: Math.max(o.reported.completionTokens, refused) };
  }
  if (o.completionDeltas === 0 && refused === 0) return { promptTokens: 0, completionTokens: 0 };
  return { promptTokens: estimateTokens(o.promptChars), completionTokens: Math.max(o.completionDeltas, estimateTokens(o.completionChars), refused) };
}

/** A token count as a usage report must carry it: a non-negative safe integer (else the estimate stands). */
export function isCount(n: unknown): n is number {
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
}

/** A limit given on the command line or in JSON: a positive integer, or undefined. */
export function positiveInt(value: unknown): number | undefined {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : undefined;
}
