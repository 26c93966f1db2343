// Pure limit arithmetic, shared by the KeyGate Durable Object and its tests.

export const WINDOW_MS = 60_000;
/** A stream slot lives this long unless renewed; a dead isolate's slot frees itself after it. */
export const LEASE_TTL_MS = 60_000;
/** How often a running request renews its slot. */
export const LEASE_RENEW_MS = 20_000;

export interface KeyLimits {
  /** Requests per minute (sliding window). */
  rpm?: number;
  /** Requests generating at once (stream or not). */
  concurrency?: number;
  /** Prompt + completion tokens per UTC day. */
  tokensPerDay?: number;
}

export interface GateState {
  /** Admission times inside the last minute, oldest first. */
  hits: number[];
  /** Live (unexpired) leases. */
  leases: number;
  /** Tokens charged today. */
  tokensToday: number;
}

export type Admission =
  | { ok: true }
  | { ok: false; code: "rate_limit_exceeded" | "concurrency_limit_exceeded" | "tokens_per_day_exceeded"; retryAfter: number; message: string };

/** Whether one more request may start; checked in the order tokens/day, rpm, concurrency. */
export function decideAdmission(state: GateState, limits: KeyLimits, now: number, wantsLease: boolean): Admission {
  if (limits.tokensPerDay !== undefined && state.tokensToday >= limits.tokensPerDay) {
    return {
      ok: false,
      code: "tokens_per_day_exceeded",
      retryAfter: secondsUntilNextDay(now),
      message: `This key has used its ${limits.tokensPerDay} tokens for today (UTC); it resets at midnight UTC.`,
    };
  }
  if (limits.rpm !== undefined && state.hits.length >= limits.rpm) {
    const oldest = state.hits[state.hits.length - limits.rpm]!;
    return {
      ok: false,
      code: "rate_limit_exceeded",
      retryAfter: Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000)),
      message: `This key is limited to ${limits.rpm} requests per minute.`,
    };
  }
  if (wantsLease && limits.concurrency !== undefined && state.leases >= limits.concurrency) {
    return {
      ok: false,
      code: "concurrency_limit_exceeded",
      retryAfter: 1,
      message: `This key is limited to ${limits.concurrency} concurrent generating requests; wait for one to finish.`,
    };
  }
  return { ok: true };
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
}

/**
 * What a request is charged: the upstream's count when it sent one, else an estimate from what was
 * generated (an aborted or failed stream is charged what it used). A request that never reached a
 * model (no deltas, no report) is charged nothing.
 */
export function chargedTokens(o: Observed): { promptTokens: number; completionTokens: number } {
  if (o.reported) return { promptTokens: o.reported.promptTokens, completionTokens: o.reported.completionTokens };
  if (o.completionDeltas === 0) return { promptTokens: 0, completionTokens: 0 };
  return { promptTokens: estimateTokens(o.promptChars), completionTokens: Math.max(o.completionDeltas, estimateTokens(o.completionChars)) };
}

/** A limit given on the command line or in JSON: a positive integer, or undefined. */
export function positiveInt(value: unknown): number | undefined {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : undefined;
}
