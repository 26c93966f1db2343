// What an isolate remembers of each server it places requests on (cached prefixes, conversations,
// requests in flight, measured speeds): the memory placement reasons from.
import type { PromptPrefix } from "./prompt-prefixes.ts";
import { PromptTokenModel } from "./prompt-token-model.ts";

/** What a server's recent answers say about its speed (llama-server `timings`), and defaults before any. */
export interface ServerSpeeds {
  /** Prompt tokens processed per second (prefill). */
  promptTps: number;
  /** Tokens generated per second. */
  genTps: number;
  /** Prompt tokens per character of the request's JSON (the tokenizer, as this server counts). */
  tokensPerChar: number;
  /** A typical answer's length in tokens, when the request sets no max_tokens. */
  completionTokens: number;
}

/**
 * Before a server has answered: a modest GPU's prefill and decode rates, about 3.3 characters of
 * chat JSON per token, and a few paragraphs of answer. The first answers replace them.
 */
export const DEFAULT_SPEEDS: ServerSpeeds = { promptTps: 1000, genTps: 30, tokensPerChar: 0.3, completionTokens: 256 };

/** One answer's measures, from its usage and timings. */
export interface AnswerSample {
  /** Characters of the request's prompt JSON (the last prefix's `chars`). */
  chars: number;
  promptTokens?: number;
  /** Prompt tokens processed (not from the cache) and how long that took. */
  promptProcessed?: number;
  promptMs?: number;
  predictedTokens?: number;
  predictedMs?: number;
}

export interface InFlight {
  startedAt: number;
  /** The estimate it was placed with: prefill of what was not cached plus generation. */
  expectedMs: number;
}

export interface LedgerLimits {
  /** Prefixes remembered per server (least recently served forgotten first). */
  prefixesPerServer: number;
  /** After this long without a turn, a conversation's home and prefixes are forgotten. */
  idleMs: number;
}

export const DEFAULT_LEDGER_LIMITS: LedgerLimits = { prefixesPerServer: 4096, idleMs: 30 * 60_000 };

interface Entry {
  /** Prefix hash → when last served; a Map keeps insertion order, so the first is the oldest. */
  prefixes: Map<string, { chars: number; at: number }>;
  /** Conversation key → when its last turn was placed here. */
  conversations: Map<string, number>;
  inflight: Map<number, InFlight>;
  /** Requests that ended lately (kept ENDED_KEPT_MS), to tell which of a sample's busy slots were ours. */
  ended: Array<{ startedAt: number; endedAt: number }>;
  speeds: ServerSpeeds;
  /** When the server last restarted (after this moment): nothing placed there before is in its cache. */
  restartedAt: number;
  /** Its prompt tokens from characters (the context check's estimate). */
  tokens: PromptTokenModel;
}

const ENDED_KEPT_MS = 10_000;

// Learned rates move a fifth of the way to each new sample: a few answers outweigh the defaults,
// one odd answer does not.
const EWMA = 0.2;
// Below these counts timings are dominated by fixed overhead, not by the rate.
const MIN_PROMPT_SAMPLE = 128;
const MIN_GEN_SAMPLE = 8;

/**
 * What this isolate knows about each server it places requests on: which conversation prefixes it
 * served recently (its prompt cache, as far as Switchyard can tell), which conversations live there,
 * Switchyard's own requests in flight on it, and its measured speeds. Pure bookkeeping, every time
 * passed in, so it is tested without a clock; one instance per isolate (placement-state.ts).
 */
export class ServerLedger {
  private readonly servers = new Map<string, Entry>();
  /** Servers whose tokens per character come from their own answers, not the default. */
  private readonly tokenizers = new Set<string>();
  private nextTicket = 1;

  constructor(private readonly limits: LedgerLimits = DEFAULT_LEDGER_LIMITS) {}

  /** Characters of the longest of `prefixes` the server served within the idle window (0: none). */
  heldChars(server: string, prefixes: readonly PromptPrefix[], now: number): number {
    const e = this.servers.get(server);
    if (!e) return 0;
    for (let i = prefixes.length - 1; i >= 0; i--) {
      const p = e.prefixes.get(prefixes[i]!.hash);
      if (p && now - p.at < this.limits.idleMs) return prefixes[i]!.chars;
    }
    return 0;
  }

  /** The server whose turn of this conversation was placed most recently (within the idle window). */
  homeOf(key: string | null, now: number): string | undefined {
    if (key === null) return undefined;
    let home: string | undefined;
    let latest = -Infinity;
    for (const [server, e] of this.servers) {
      const at = e.conversations.get(key);
      if (at !== undefined && now - at < this.limits.idleMs && at > latest) {
        home = server;
        latest = at;
      }
    }
    return home;
  }

  /** Conversations living on the server (placed within the idle window). */
  conversationCount(server: string, now: number): number {
    const e = this.servers.get(server);
    if (!e) return 0;
    let n = 0;
    for (const at of e.conversations.values()) if (now - at < this.limits.idleMs) n++;
    return n;
  }

  /** Switchyard's requests in flight on the server, in the order they were placed. */
  inflight(server: string): InFlight[] {
    return [...(this.servers.get(server)?.inflight.values() ?? [])];
  }

  /**
   * How many of Switchyard's requests (this isolate's) were in flight on the server at some time
   * between `from` and `to`: the part of a `/slots` sample gathered then that is already in
   * `inflight()` or over.
   */
  busyAt(server: string, from: number, to = from): number {
    const e = this.servers.get(server);
    if (!e) return 0;
    let n = 0;
    for (const r of e.inflight.values()) if (r.startedAt <= to) n++;
    // `ended` is in end order: only those that ended after `from` are read (a sample is a second or
    // two old; the list keeps ENDED_KEPT_MS, which under a fast upstream is thousands of requests).
    const ended = e.ended;
    for (let i = firstEndedAfter(ended, from); i < ended.length; i++) if (ended[i]!.startedAt <= to) n++;
    return n;
  }

  /** How many of Switchyard's requests are in flight on the server (inflight() without the copy). */
  inflightCount(server: string): number {
    return this.servers.get(server)?.inflight.size ?? 0;
  }

  /**
   * The server's prompt tokens from characters (template overhead and per-character rate apart),
   * fitted on its answers' counts and its own `/tokenize` counts: what the context check estimates with.
   */
  tokenModel(server: string): PromptTokenModel {
    return this.entry(server).tokens;
  }

  speeds(server: string): ServerSpeeds {
    return this.servers.get(server)?.speeds ?? DEFAULT_SPEEDS;
  }

  /**
   * A request placed on the server: in flight until the returned `end` is called (once; later calls
   * do nothing). Its conversation lives there from now on, so requests placed in the same instant
   * see it and spread. `end(false)` (the attempt failed before its first event) moves the
   * conversation back where it was. `at` is when it ended (default: when it began).
   */
  begin(server: string, key: string | null, expectedMs: number, now: number): (served?: boolean, at?: number) => void {
    const e = this.entry(server);
    const ticket = this.nextTicket++;
    e.inflight.set(ticket, { startedAt: now, expectedMs });
    const previous = key === null ? undefined : this.homeOf(key, now);
    const before = key === null ? undefined : e.conversations.get(key);
    if (key !== null) this.place(server, key, now);
    let open = true;
    return (served = true, at = now) => {
      if (!open) return;
      open = false;
      e.inflight.delete(ticket);
      insertByEnd(e.ended, { startedAt: now, endedAt: Math.max(at, now) });
      // Pruned in one splice once a few are stale, not one shift (a copy of the list) per request.
      const stale = firstEndedAfter(e.ended, at - ENDED_KEPT_MS - 1);
      if (stale > 64 || stale === e.ended.length) e.ended.splice(0, stale);
      if (served || key === null) return;
      if (before === undefined) e.conversations.delete(key);
      else e.conversations.set(key, before);
      if (previous !== undefined && previous !== server) this.servers.get(previous)?.conversations.set(key, now);
    };
  }

  /** The server answered a prompt with these prefixes: it holds them in its cache now. */
  served(server: string, prefixes: readonly PromptPrefix[], now: number): void {
    const e = this.entry(server);
    for (const p of prefixes) {
      e.prefixes.delete(p.hash);
      e.prefixes.set(p.hash, { chars: p.chars, at: now });
    }
    while (e.prefixes.size > this.limits.prefixesPerServer) e.prefixes.delete(e.prefixes.keys().next().value!);
  }

  /**
   * A placement another isolate made (or this one's, echoed back by the hub): the server holds the
   * prefixes and the conversation lives there, unless this isolate knows of something newer.
   */
  absorb(server: string, key: string | null, prefixes: readonly PromptPrefix[], at: number): void {
    const e = this.entry(server);
    // Placed before the server's last restart: gone with its cache.
    if (at < e.restartedAt) return;
    for (const p of prefixes) {
      const had = e.prefixes.get(p.hash);
      if (had && had.at >= at) continue;
      e.prefixes.delete(p.hash);
      e.prefixes.set(p.hash, { chars: p.chars, at });
    }
    while (e.prefixes.size > this.limits.prefixesPerServer) e.prefixes.delete(e.prefixes.keys().next().value!);
    if (key === null) return;
    const home = this.homeOf(key, at);
    const homeAt = home === undefined ? -Infinity : this.servers.get(home)!.conversations.get(key)!;
    if (at > homeAt) this.place(server, key, at);
  }

  /**
   * The server restarted after `at` (the health hub saw its process gone then, and ready later): its
   * prompt cache is new, so the prefixes and conversations placed there before are forgotten. Conversations then go where
   * placement finds best, and the server, empty, is where new ones go. Its speeds stay (same box,
   * same model). Idempotent: each snapshot repeats the latest restart.
   */
  restarted(server: string, at: number): void {
    const e = this.servers.get(server);
    if (!e || at <= e.restartedAt) return;
    e.restartedAt = at;
    for (const [hash, p] of e.prefixes) if (p.at < at) e.prefixes.delete(hash);
    for (const [key, placed] of e.conversations) if (placed < at) e.conversations.delete(key);
  }

  /** Folds one answer's usage and timings into the server's speeds. */
  learn(server: string, s: AnswerSample): void {
    const e = this.entry(server);
    const v = { ...e.speeds };
    const mix = (old: number, sample: number) => old + EWMA * (sample - old);
    if (s.promptTokens && s.chars > 0) {
      e.tokens.add({ chars: s.chars, tokens: s.promptTokens });
      // The first sample replaces the default outright.
      v.tokensPerChar = this.tokenizers.has(server) ? mix(v.tokensPerChar, s.promptTokens / s.chars) : s.promptTokens / s.chars;
      this.tokenizers.add(server);
    }
    if (s.promptProcessed !== undefined && s.promptProcessed >= MIN_PROMPT_SAMPLE && s.promptMs) v.promptTps = mix(v.promptTps, (s.promptProcessed * 1000) / s.promptMs);
    if (s.predictedTokens !== undefined && s.predictedTokens >= MIN_GEN_SAMPLE && s.predictedMs) v.genTps = mix(v.genTps, (s.predictedTokens * 1000) / s.predictedMs);
    if (s.predictedTokens !== undefined && s.predictedTokens > 0) v.completionTokens = mix(v.completionTokens, s.predictedTokens);
    e.speeds = v;
  }

  private place(server: string, key: string, now: number): void {
    for (const [other, e] of this.servers) if (other !== server) e.conversations.delete(key);
    const e = this.entry(server);
    e.conversations.delete(key);
    e.conversations.set(key, now);
    // Forget conversations idle past the window (oldest first), so the map stays the live set.
    for (const [k, at] of e.conversations) {
      if (now - at < this.limits.idleMs) break;
      e.conversations.delete(k);
    }
  }

  private entry(server: string): Entry {
    let e = this.servers.get(server);
    if (!e) {
      e = { prefixes: new Map(), conversations: new Map(), inflight: new Map(), ended: [], speeds: DEFAULT_SPEEDS, restartedAt: -Infinity, tokens: new PromptTokenModel() };
      this.servers.set(server, e);
    }
    return e;
  }
}

type Ended = { startedAt: number; endedAt: number };

/** The index of the first request in `ended` (in end order) that ended after `t`. */
function firstEndedAfter(ended: readonly Ended[], t: number): number {
  let lo = 0;
  let hi = ended.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ended[mid]!.endedAt > t) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** Keeps `ended` in end order: requests end in time order, so this is almost always an append. */
function insertByEnd(ended: Ended[], r: Ended): void {
  let i = ended.length;
  while (i > 0 && ended[i - 1]!.endedAt > r.endedAt) i--;
  if (i === ended.length) ended.push(r);
  else ended.splice(i, 0, r);
}
