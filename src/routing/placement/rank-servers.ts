// Placement's choice among llama-servers: where a request would finish soonest, keeping a
// conversation on the server that holds its prompt cache unless moving it clearly pays.
import { serviceMs, slotWaitMs } from "./expected-finish.ts";
import type { PromptPrefix } from "./prompt-prefixes.ts";
import type { ServerLedger } from "./server-ledger.ts";

/** What placement reads from a request. */
export interface PlacementRequest {
  /** The conversation (conversationKey()): its home is where its earlier turns went. */
  key: string | null;
  /** The prompt's prefixes at message boundaries (promptPrefixes()), shortest first. */
  prefixes: readonly PromptPrefix[];
  /** The request's max_tokens, bounding the generation estimate. */
  maxTokens?: number;
}

/** A server placement may choose. */
export interface ServerChoice {
  id: string;
  /** Configured capacity share (`weight`, default 1): new conversations are balanced per weight. */
  weight: number;
  /** Slots, and the last sample's busy count and when it was taken (`checkedAt`; 0: no sample). */
  load: { slots: number; sampledBusy: number; sampledAt: number };
  /** Deterministic tie-break for equal servers (rendezvous score of the key): every isolate agrees. */
  tieBreak: number;
}

export interface Estimate {
  id: string;
  waitMs: number;
  /** Prompt tokens the server would have to process (what it is not known to hold). */
  uncachedTokens: number;
  /** When the request would finish there, ms from now: wait + prefill of the uncached part + generation. */
  finishMs: number;
  /** The server placed the conversation's latest turn. */
  home: boolean;
  /**
   * On the first estimate only, when it is the conversation's home kept over a move: how long the
   * request may wait for a slot there before the best move would have finished it as soon (the best
   * move's cost less home's service). The attempt loop holds the request in line for home that long
   * when home turns out full (admission-wait.ts holdFor), rather than recompute its prompt elsewhere.
   */
  holdMs?: number;
}

/** Finishes closer than this (or than this share of the faster) are the same: noise, not a reason to move. */
const SAME_MS = 25;
const SAME_SHARE = 0.05;
/** A `/slots` sample takes up to a second to gather: requests of ours that ended in it were what it saw. */
const SAMPLE_SPAN_MS = 1000;
const same = (a: number, b: number) => Math.abs(a - b) <= Math.max(SAME_MS, SAME_SHARE * Math.min(a, b));

/**
 * What the request would cost on the server once it has a slot: the prompt tokens it is not known to
 * hold (prefilled at its measured speed) and the answer (min(max_tokens, its typical answer)).
 */
export function serviceEstimate(ledger: ServerLedger, server: string, req: PlacementRequest | null, now: number): { uncachedTokens: number; generate: number; service: number } {
  const speeds = ledger.speeds(server);
  const prefixes = req?.prefixes ?? [];
  const promptChars = prefixes.at(-1)?.chars ?? 0;
  const uncachedTokens = Math.max(0, promptChars - ledger.heldChars(server, prefixes, now)) * speeds.tokensPerChar;
  const generate = req?.maxTokens !== undefined ? Math.min(req.maxTokens, speeds.completionTokens) : speeds.completionTokens;
  return { uncachedTokens, generate, service: serviceMs(uncachedTokens, generate, speeds) };
}

/**
 * The order in which to try servers for a request, by when it would finish on each
 * (docs/architecture.md, "Placement"):
 * - A conversation with a home stays there unless another server would finish it sooner. When that
 *   server has a slot free now, it moves as soon as the wait for a slot at home is longer than
 *   recomputing there the part of the prompt only home holds (its uncached tokens at that server's
 *   measured prefill rate): the wait bound. When that server is busy too, the move also counts what
 *   it costs that server's own conversations (the moved turn holds one of its slots for its whole
 *   service, and they queue behind it): it moves only when the wait at home is longer than the wait
 *   there plus about two such services (one when it hosts no conversation).
 *   Without that, every burst that happens to crowd one server swaps conversations both ways and
 *   recomputes them all; finishes within noise keep it home too.
 * - A new conversation goes where the fewest conversations live (per weight), so a few
 *   conversations split evenly and each later turn finds its server; a server whose finish is
 *   clearly later than the best (it has a queue the others do not) is passed over for one that
 *   finishes sooner. Equal servers are ordered by the key's rendezvous score.
 * The rest follow by finish, so a failover goes to the next soonest.
 */
export function rankServers(choices: readonly ServerChoice[], req: PlacementRequest, ledger: ServerLedger, now: number): Estimate[] {
  const home = ledger.homeOf(req.key, now);
  const promptChars = req.prefixes.at(-1)?.chars ?? 0;
  const estimates = choices.map((c): Estimate & { conversations: number; tieBreak: number; moveMs: number } => {
    const speeds = ledger.speeds(c.id);
    const { uncachedTokens, generate, service } = serviceEstimate(ledger, c.id, req, now);
    // What is not known of the others' requests is taken to be like this one, uncached.
    const typicalMs = serviceMs(promptChars * speeds.tokensPerChar, generate, speeds);
    // What the sample saw beyond Switchyard's own requests in flight at the time (a second-old
    // sample still shows the turn that just ended; it must not count as a queue).
    const unseen = Math.max(0, c.load.sampledBusy - ledger.busyAt(c.id, c.load.sampledAt - SAMPLE_SPAN_MS, c.load.sampledAt));
    const hostsOthers = ledger.conversationCount(c.id, now) - (c.id === home ? 1 : 0) > 0;
    const waitMs = slotWaitMs({ slots: c.load.slots, inflight: ledger.inflight(c.id), unseen, typicalMs }, now);
    return {
      id: c.id,
      waitMs,
      uncachedTokens,
      finishMs: waitMs + service,
      home: c.id === home,
      conversations: ledger.conversationCount(c.id, now) / c.weight,
      tieBreak: c.tieBreak,
      // The cost of moving this conversation here: its finish, plus the slot time it takes from the
      // server's own conversations when there are any and it has to queue among them. A server with
      // a slot free now takes it for what recomputing the uncached part costs there, no more: the
      // wait bound (docs/reliability.md), so a turn never waits at home beside an idle server longer
      // than moving would cost.
      moveMs: waitMs + service + (hostsOthers && waitMs > 0 ? service : 0),
    };
  });
  const byFinish = [...estimates].sort((a, b) => a.finishMs - b.finishMs || b.tieBreak - a.tieBreak);
  const best = byFinish[0];
  if (!best) return [];
  let first: (typeof estimates)[number];
  let holdMs: number | undefined;
  const atHome = estimates.find((e) => e.home);
  if (atHome) {
    const move = estimates.filter((e) => e !== atHome).sort((a, b) => a.moveMs - b.moveMs)[0];
    first = move && move.moveMs < atHome.finishMs && !same(move.moveMs, atHome.finishMs) ? move : atHome;
    if (first === atHome && move) holdMs = Math.max(0, move.moveMs - (atHome.finishMs - atHome.waitMs));
  }
  else {
    // Balance among the servers that finish about as soon as the best.
    const near = estimates.filter((e) => same(e.finishMs, best.finishMs) || e.waitMs <= best.waitMs);
    first = near.sort((a, b) => a.conversations - b.conversations || a.finishMs - b.finishMs || b.tieBreak - a.tieBreak)[0]!;
  }
  const ranked = [first, ...byFinish.filter((e) => e !== first)].map(({ id, waitMs, uncachedTokens, finishMs, home: h }): Estimate => ({ id, waitMs, uncachedTokens, finishMs, home: h }));
  if (holdMs) ranked[0]!.holdMs = holdMs;
  return ranked;
}
