// What isolates and a pool's AdmissionHub send each other (docs/architecture.md, "Across isolates"):
// a request's ask, the grant or place in line it gets, the credits an isolate may start its next
// requests on, and how long those last.

/** A request asking for a slot on one of its servers. */
export interface Ask {
  /** The request's own id (unique across isolates). */
  id: string;
  /** Its line: the requested model. */
  model: string;
  /** Whose turn it takes ("" for requests without a key) and its priority level. */
  key: string;
  priority: number;
  /** The llama-servers it may go to (health keys), in the order its isolate's placement would try them. */
  plan: readonly string[];
  /**
   * Servers of the plan placement put back for a reason of their own (an open or half-open circuit,
   * a server down or loading, a context window that holds the prompt but not max_tokens): granted
   * only when no other server of the plan has a slot free, in plan order, as one isolate tries them.
   */
  demoted?: readonly string[];
  /** Each plan server's slot count as the asking isolate knows it (its sample, its `/props` read, or 1). */
  slots: Readonly<Record<string, number>>;
  /** Its conversation (placement's key): a server holding its prompt is preferred. */
  conversation: string | null;
  /** The model's `balance` is "ordered": the first server of the plan with a slot free, whatever the others hold. */
  ordered?: boolean;
  /** Slots it leaves free on each server while interactive requests for its model come (a batch line: batch.keepFreeSlots). */
  keepFree?: number;
  /**
   * Placement kept the conversation at its home, first of the plan, over a move (rank-servers.ts
   * holdMs): granted there when it has a slot; when it is full and nobody waits, held for a slot
   * there for up to `ms` from the ask, then granted anywhere (home-holds.ts).
   */
  hold?: { server: string; ms: number };
}

/** A grant: the request may start on `server`; `ends` it when its answer is over. */
export interface Grant {
  id: string;
  server: string;
}

/** A slot an isolate may start its next request on without asking (use it within `ttlMs` of asking for it). */
export interface Credit {
  id: string;
  server: string;
  ttlMs: number;
}

/**
 * A credit not used within this long lapses and its slot goes back. An isolate uses one only within
 * this less CREDIT_MARGIN_MS of sending the call that brought it (shared-place.ts), so a use reaches
 * the hub before the credit lapses unless that call took longer than the margin.
 */
export const CREDIT_TTL_MS = 5000;
export const CREDIT_MARGIN_MS = 1000;

/**
 * What an ask answers: a grant on `server` (with credits for the isolate's next requests on the
 * servers it wanted them for, where the pool has room to spare), or a place in line (`ahead` wait before it).
 */
export type AskReply = { server: string; credits?: Credit[] } | { queued: true; ahead: number };

/** What a wait answers: the grant, or the wait ran out (the request is out of the line; `ahead` were before it). */
export type WaitReply = { server: string } | { timedOut: true; ahead: number };
