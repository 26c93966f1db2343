// The coordinator's bookkeeping (docs/architecture.md, "Admission queue", "Across isolates"): the
// grants of slots on llama-servers to requests from every isolate, the line of those waiting, in
// fair order, and where each conversation's prompt cache sits. Pure, every time passed in; the
// Durable Object around it (admission-hub.ts) only carries calls. Long on purpose, long because
// every way a slot is counted (grants, credits, holds, the lines) changes the same in-flight counts,
// and one class keeps the invariant (never more than a server's slots) in one place.
import { keptFree } from "./capacity.ts";
import { CREDIT_TTL_MS, type Ask, type Credit, type Grant } from "./hub-wire.ts";
import { FairQueue } from "./fair-queue.ts";
import { HomeHolds } from "./home-holds.ts";
import { InteractiveRecency } from "./interactive-recency.ts";
import { BATCH_TOP_LEVEL } from "./service-class.ts";

interface Held {
  server: string;
  conversation: string | null;
  /** When the grant lapses unless ended: an isolate that died never sends its end. */
  expires: number;
  /** A credit: a slot held for an isolate's next request, not used yet (it lapses at `expires`, CREDIT_TTL_MS). */
  credit?: true;
}

interface Waiter {
  ask: Ask;
  arrivedAt: number;
  /** The slots it leaves free, fixed as it asked (interactive-recency.ts). */
  keepFree: number;
}

/** A grant not ended in this long is taken as lost (the isolate holding it died) and its slot freed. */
export const GRANT_TTL_MS = 15 * 60_000;
/** Conversations whose server is remembered (the oldest forgotten first). */
const MAX_CONVERSATIONS = 10_000;
/** Servers remembered (from the configuration; the bound is for safety). */
const MAX_SERVERS = 1000;

/**
 * Every isolate's requests on a pool of llama-servers, counted in one place: a server is never
 * granted more requests than its slots; when none of a request's servers has one free it waits in
 * its model's line (keys in turn, priority levels strict, FairQueue) and an end gives the freed slot
 * to the head of a line that can use it. Among a request's servers with a slot free and not demoted,
 * the one already holding its conversation's prompt comes first, then the least loaded (in flight ÷
 * slots), then plan order; for a model balanced "ordered", the first in plan order; a demoted server
 * only when no other has a slot free.
 */
export class PoolGrants {
  private readonly slots = new Map<string, number>();
  private readonly held = new Map<string, Held>();
  private readonly inflight = new Map<string, number>();
  private readonly lines = new Map<string, FairQueue<Waiter>>();
  private readonly waiters = new Map<string, Waiter>();
  /** Waiters held for their conversation's home (Ask.hold), outside the lines. */
  private readonly holds = new HomeHolds<Waiter>();
  /** Conversation → the server its last turn was granted on (insertion order = age). */
  private readonly homes = new Map<string, string>();
  /** When interactive requests last asked for each model: a batch line's keepFree holds while they come. */
  private readonly recency = new InteractiveRecency();
  /** Credits used after they lapsed (`use`). */
  private lateUses = 0;
  /** Grants made to waiters when a call found grants or credits lapsed (`ask`, `take`, `use`): for the hub to deliver (`madeOnLapse`). */
  private readonly lapsed: Grant[] = [];

  /** A grant now, or null: the request waits in line (until `end` or `leave`). */
  ask(ask: Ask, now: number): Grant | null {
    this.lapsed.push(...this.expire(now));
    for (const s of ask.plan) if (ask.slots[s] !== undefined) this.learn(s, ask.slots[s]!);
    const keepFree = this.recency.keepFree(ask.model, ask.keepFree ?? 0, now);
    const line = this.lines.get(ask.model);
    const w: Waiter = { ask, arrivedAt: now, keepFree };
    if (!line?.size) {
      const server = this.choose(ask, keepFree);
      const home = this.holdHome(ask);
      // Its home full, and nobody else waiting: held for a slot there a while, rather than moved.
      if (home !== undefined && server !== home && !this.open(home, keepFree)) {
        this.holds.add(w, { server: home, until: now + ask.hold!.ms });
        this.waiters.set(ask.id, w);
        return null;
      }
      if (server !== undefined) return this.grant(ask, server, now);
    }
    const waiting = this.line(ask.model);
    waiting.push(w, ask.key, ask.priority);
    // Ahead of everyone waiting (an interactive request behind batch lines held by their keepFree):
    // the slot they leave free is its now; nobody is overtaken.
    const server = waiting.peek() === w ? this.choose(ask, keepFree) : undefined;
    if (server !== undefined) {
      waiting.shift();
      if (!waiting.size) this.lines.delete(ask.model);
      return this.grant(ask, server, now);
    }
    this.waiters.set(ask.id, w);
    return null;
  }

  /**
   * A request whose granted attempt (`previous`) failed takes a slot on `server`, the next of its
   * pass or the same one again, if one is free there, without waiting in line: it had its turn, and
   * one isolate's pass moves on (or retries) the same way. `previous` ends first, so a retry on its
   * own server finds the slot it just left; what that frees on another server goes to the line
   * (`made`, the grants that gave).
   */
  take(ask: Ask, server: string, previous: string | null, now: number): { grant: Grant | null; made: Grant[] } {
    this.lapsed.push(...this.expire(now));
    const h = previous !== null ? this.held.get(previous) : undefined;
    if (h) {
      this.held.delete(previous!);
      this.count(h.server, -1);
    }
    if (ask.slots[server] !== undefined) this.learn(server, ask.slots[server]!);
    const slots = this.slots.get(server) ?? 1;
    const keepFree = this.recency.keepFree(ask.model, ask.keepFree ?? 0, now);
    const grant = ask.plan.includes(server) && this.inflightOn(server) + keptFree(slots, keepFree) < slots ? this.grant(ask, server, now) : null;
    return { grant, made: h ? this.pump(now) : [] };
  }

  /**
   * Credits for the asking isolate's next requests, one on each of `servers` (of the ask's plan, not
   * demoted) with room to spare: nobody waits for the model, and the server keeps a slot free besides
   * the credit (a one-slot server never has one: its every request asks). A batch line's ask gets none
   * (its keepFree is judged per request). Each is counted as a grant until used or lapsed.
   */
  credit(ask: Ask, servers: readonly string[], now: number): Credit[] {
    if (ask.keepFree || this.lines.get(ask.model)?.size) return [];
    for (const s of ask.plan) if (ask.slots[s] !== undefined) this.learn(s, ask.slots[s]!);
    const demoted = new Set(ask.demoted ?? []);
    const made: Credit[] = [];
    for (const server of servers) {
      if (!ask.plan.includes(server) || demoted.has(server)) continue;
      if (this.inflightOn(server) + 2 > (this.slots.get(server) ?? 1)) continue;
      const id = `credit:${ask.id}:${server}`;
      this.held.set(id, { server, conversation: null, expires: now + CREDIT_TTL_MS, credit: true });
      this.count(server, 1);
      made.push({ id, server, ttlMs: CREDIT_TTL_MS });
    }
    return made;
  }

  /**
   * An isolate started `ask` on the credit `creditId` (on `server`): the credit's slot is the request's grant from
   * now on (ended by `end(ask.id)`). A credit that lapsed before its use arrived (the call was slower
   * than CREDIT_MARGIN_MS, or the hub restarted) is granted anyway, the request having started:
   * `late`, the one way the servers can hold more than their slots (counted in stats).
   */
  use(creditId: string, server: string, ask: Ask, now: number): { late: boolean } {
    this.lapsed.push(...this.expire(now));
    const h = this.held.get(creditId);
    const late = !h?.credit;
    if (h?.credit) {
      this.held.delete(creditId);
      this.count(h.server, -1);
    } else this.lateUses++;
    this.grant(ask, server, now);
    return { late };
  }

  /**
   * When the first credit lapses or hold ends (undefined: neither), for a hub that must give the
   * credit's slot to a waiter then, or let a held waiter go to any server.
   */
  nextLapse(): number | undefined {
    let first = this.holds.nextEnd();
    for (const h of this.held.values()) if (h.credit && (first === undefined || h.expires < first)) first = h.expires;
    return first;
  }

  /** The request's answer is over (or its attempt failed): its slot goes to whoever waits for it. Returns the grants that made. */
  end(id: string, now: number): Grant[] {
    const h = this.held.get(id);
    if (!h) return this.pump(now);
    this.held.delete(id);
    this.count(h.server, -1);
    return this.pump(now);
  }

  /** A waiter left (its client went, its wait ran out): out of the line. */
  leave(id: string): boolean {
    const w = this.waiters.get(id);
    if (!w) return false;
    this.waiters.delete(id);
    if (this.holds.delete(w)) return true;
    const line = this.lines.get(w.ask.model);
    line?.remove(w);
    if (line && !line.size) this.lines.delete(w.ask.model);
    return true;
  }

  /** Whether `id` waits in line. */
  waiting(id: string): boolean {
    return this.waiters.has(id);
  }

  /** How many wait in every line. */
  get waitingCount(): number {
    return this.waiters.size;
  }

  /** How many wait ahead of `id` in its line (0 when it does not wait). */
  ahead(id: string): number {
    const w = this.waiters.get(id);
    return w ? (this.lines.get(w.ask.model)?.ahead(w) ?? 0) : 0;
  }

  /** How many wait for `model` above the batch class: every isolate's interactive requests in line (the batch runner holds its lines back while any do). */
  interactiveWaiting(model: string): number {
    let held = 0;
    for (const w of this.holds.waiters()) if (w.ask.model === model && w.ask.priority > BATCH_TOP_LEVEL) held++;
    return (this.lines.get(model)?.sizeAbove(BATCH_TOP_LEVEL) ?? 0) + held;
  }

  /** Grants in flight on `server`. */
  inflightOn(server: string): number {
    return this.inflight.get(server) ?? 0;
  }

  /** What the coordinator holds (the status page, tests). */
  stats(): { grants: number; credits: number; lateUses: number; waiting: number; servers: Record<string, { slots: number; inflight: number }> } {
    const servers: Record<string, { slots: number; inflight: number }> = {};
    for (const [s, n] of this.slots) servers[s] = { slots: n, inflight: this.inflightOn(s) };
    let credits = 0;
    for (const h of this.held.values()) if (h.credit) credits++;
    return { grants: this.held.size - credits, credits, lateUses: this.lateUses, waiting: this.waiters.size, servers };
  }

  /** The grants to waiters that `ask`, `take` or `use` made when they found grants or credits lapsed (taken: each delivered once). */
  madeOnLapse(): Grant[] {
    return this.lapsed.splice(0);
  }

  /** Grants lost to a dead isolate lapse; their slots go to waiters. Returns the grants that made. */
  expire(now: number): Grant[] {
    let freed = (this.holds.nextEnd() ?? Infinity) <= now;
    for (const [id, h] of this.held) {
      if (h.expires > now) continue;
      this.held.delete(id);
      this.count(h.server, -1);
      freed = true;
    }
    return freed ? this.pump(now) : [];
  }

  /** Gives held waiters their home's slot, then turns in every line while its head has a server with a slot free. */
  private pump(now: number): Grant[] {
    const made: Grant[] = [];
    const over = this.holds.settle(now, (w, server) => {
      if (!this.open(server, w.keepFree)) return false;
      this.waiters.delete(w.ask.id);
      made.push(this.grant(w.ask, server, now));
      return true;
    });
    // A hold that ran out: the waiter takes its turn in line like anyone, first of its key.
    for (const w of over) this.line(w.ask.model).pushFront(w, w.ask.key, w.ask.priority);
    for (const [model, line] of [...this.lines]) {
      for (let head = line.peek(); head; head = line.peek()) {
        const server = this.choose(head.ask, head.keepFree);
        if (server === undefined) break;
        line.shift();
        this.waiters.delete(head.ask.id);
        made.push(this.grant(head.ask, server, now));
      }
      if (!line.size) this.lines.delete(model);
    }
    return made;
  }

  /**
   * Where a request placement holds for its home is held (Ask.hold): the server the hub last granted
   * its conversation, which counts every isolate's turns, else the one the asking isolate named (its
   * own ledger may not have seen the conversation's last move, made at another door).
   */
  private holdHome(ask: Ask): string | undefined {
    if (!ask.hold || ask.hold.ms <= 0) return undefined;
    const server = (ask.conversation !== null ? this.homes.get(ask.conversation) : undefined) ?? ask.hold.server;
    return ask.plan.includes(server) ? server : undefined;
  }

  /** Whether `server` has a slot free for a request that leaves `keepFree` free. */
  private open(server: string, keepFree: number): boolean {
    const slots = this.slots.get(server) ?? 1;
    return this.inflightOn(server) + keptFree(slots, keepFree) < slots;
  }

  private choose(ask: Ask, keepFree: number): string | undefined {
    const open = ask.plan.filter((s) => this.open(s, keepFree));
    const demoted = new Set(ask.demoted ?? []);
    const free = open.filter((s) => !demoted.has(s));
    if (!free.length) return open[0];
    if (ask.ordered) return free[0];
    const home = ask.conversation !== null ? this.homes.get(ask.conversation) : undefined;
    if (home !== undefined && free.includes(home)) return home;
    if (home === undefined && ask.hold && free.includes(ask.hold.server)) return ask.hold.server;
    let best = free[0]!;
    for (const s of free) if (this.inflightOn(s) / (this.slots.get(s) ?? 1) < this.inflightOn(best) / (this.slots.get(best) ?? 1)) best = s;
    return best;
  }

  private grant(ask: Ask, server: string, now: number): Grant {
    this.held.set(ask.id, { server, conversation: ask.conversation, expires: now + GRANT_TTL_MS });
    this.count(server, 1);
    if (ask.conversation !== null) {
      this.homes.delete(ask.conversation);
      this.homes.set(ask.conversation, server);
      if (this.homes.size > MAX_CONVERSATIONS) this.homes.delete(this.homes.keys().next().value!);
    }
    return { id: ask.id, server };
  }

  private count(server: string, by: number): void {
    const n = (this.inflight.get(server) ?? 0) + by;
    if (n > 0) this.inflight.set(server, n);
    else this.inflight.delete(server);
  }

  private learn(server: string, slots: number): void {
    if (!this.slots.has(server) && this.slots.size >= MAX_SERVERS) this.slots.delete(this.slots.keys().next().value!);
    this.slots.set(server, Math.max(1, Math.floor(slots)));
  }

  private line(model: string): FairQueue<Waiter> {
    let line = this.lines.get(model);
    if (!line) this.lines.set(model, (line = new FairQueue()));
    return line;
  }
}

