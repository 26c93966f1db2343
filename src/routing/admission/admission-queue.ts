// The admission queue's bookkeeping: who waits for which model, in what order, and which slots are
// held for them, so a burst waits here in fair turns rather than inside a full llama-server.
import type { HealthSnapshot } from "../../health/upstream-health.ts";
import { serviceMs } from "../placement/expected-finish.ts";
import { serviceEstimate } from "../placement/rank-servers.ts";
import { DEFAULT_SPEEDS, type ServerLedger } from "../placement/server-ledger.ts";
import { keptFree, retryAfterSeconds, serverLoad, verdictFor, type Hosting, type Seat, type ServerLoad, type Verdict } from "./capacity.ts";
import { FairQueue } from "./fair-queue.ts";
import { InteractiveRecency } from "./interactive-recency.ts";
import { HomeHolds } from "./home-holds.ts";
import type { Ticket } from "./ticket.ts";
import { BATCH_TOP_LEVEL } from "./service-class.ts";

interface Line {
  model: string;
  queue: FairQueue<Ticket>;
  /** Waiters held for one server's slot (Ticket.hold), oldest first: outside the fair order, so they keep nobody waiting for another server. */
  held: HomeHolds<Ticket>;
  lastTimerPump: number;
}

/** A waiter for a model no router can take without a swap waits this long before its routers drain for it. */
const DRAIN_AFTER_MS = 2000;

/** Timer pumps of one line closer together than this do nothing new: the sample changes once a second. */
const TIMER_PUMP_GAP_MS = 200;

/**
 * The admission queue of one isolate: a line per model, in fair order (FairQueue), and the slots
 * held for requests given a turn. Pure bookkeeping over the ledger and the health snapshot the
 * caller passes in, every time passed in, so two isolates over one server can be simulated
 * (docs/architecture.md, "Admission queue").
 *
 * A request may start at once when nobody waits for its model and its plan is not full. Otherwise
 * it waits; `pump` gives turns in fair order while the head of the line can start: a llama-server
 * with a slot free is held for it (so the next waiter does not count the same slot), and at most one
 * waiter a pump goes to try targets whose capacity is unknown (a browser session), so a line of a
 * hundred does not storm a full hub. The head that cannot start keeps everyone behind it waiting:
 * nobody overtakes.
 */
export class AdmissionQueue {
  private readonly lines = new Map<string, Line>();
  private readonly reservations = new Map<string, number>();
  /** When interactive requests last asked for each model (a batch line's keepFree holds while they come). */
  readonly recency = new InteractiveRecency();

  constructor(
    private readonly ledger: () => ServerLedger,
    /** The slot count the isolate read from a server's `/props`, for a server not sampled yet (slot-counts.ts). */
    private readonly learned: (server: string) => number | undefined = () => undefined,
    /** What a router can do for the model now (placement/model-pool.ts): it has it, can load it, or cannot without a swap under requests in flight. */
    private readonly hosts?: (server: string, model: string) => Hosting,
  ) {}

  /** Whether `t` may start now; if not it waits, and `onTurn` is called when it may. */
  enter(t: Ticket, snapshot: HealthSnapshot): boolean {
    // A slot that freed unseen (in the sample) goes to whoever is held for it first.
    const existing = this.lines.get(t.model);
    if (existing?.held.size) this.pumpHeld(existing, snapshot);
    if (!existing?.queue.size) {
      const v = this.verdict(t, snapshot);
      if (v.kind !== "full") {
        this.grant(t, v);
        return true;
      }
    }
    const line = this.line(t.model);
    line.queue.push(t, t.key, t.priority);
    this.pumpLine(line, snapshot, false);
    return t.granted;
  }

  /**
   * A turn that ended in no target with capacity: a turn from the line goes back to the front (its
   * key's turn too), a request let through on arrival joins the end of the line. Only a slot known
   * to be free gives it a turn at once: trying what was just found full again is for the next pump.
   */
  requeue(t: Ticket, snapshot: HealthSnapshot): boolean {
    this.release(t);
    t.granted = false;
    const line = this.line(t.model);
    if (t.hold && t.hold.until > Date.now()) line.held.add(t, t.hold);
    else if (t.waited) line.queue.pushFront(t, t.key, t.priority);
    else line.queue.push(t, t.key, t.priority);
    this.pumpLine(line, snapshot, false);
    return t.granted;
  }

  /** Leaves the line (a client gone, a wait run out); the slot held for it, if any, is free again. */
  leave(t: Ticket, snapshot: HealthSnapshot): void {
    const line = this.lines.get(t.model);
    const waited = (line?.queue.remove(t) ?? false) || (line?.held.delete(t) ?? false);
    const held = this.release(t);
    t.granted = false;
    t.onTurn = undefined;
    t.hold = null;
    if (line && (waited || held)) this.pumpLine(line, snapshot, false);
    else if (line && !line.queue.size && !line.held.size) this.lines.delete(t.model);
  }

  /**
   * Whether a request given its turn may start an attempt on `server` now: a slot there is free, or
   * held for it. Yes gives up the slot held for it anywhere (the attempt's place in the ledger counts
   * it from here on, so call it just before `ledger.begin`).
   */
  mayStart(t: Ticket, server: string, snapshot: HealthSnapshot): boolean {
    const drain = this.drains().get(server);
    if (drain !== undefined && drain !== t.plan.find((s) => s.server === server)?.model) return false;
    const load = this.load(server, snapshot);
    const mine = t.reserved === server ? 1 : 0;
    if (load.busy - mine + keptFree(load.slots, t.keepFree) >= load.slots) return false;
    this.release(t);
    return true;
  }

  /** Nobody waits in any line, and no slot is held for anyone. */
  idle(): boolean {
    return this.lines.size === 0 && this.reservations.size === 0;
  }

  /** `t` starts an attempt on the server a slot was held on for it: the ledger counts it from here on. */
  startedOn(t: Ticket): void {
    this.release(t);
  }

  /** The turn is over (an attempt started, or none could): a slot still held for it goes to the next. */
  turnEnded(t: Ticket, snapshot: HealthSnapshot): void {
    if (this.release(t)) this.pump(snapshot);
  }

  /** Gives turns in every line while its head can start (a request of ours ended, a client left). */
  pump(snapshot: HealthSnapshot): void {
    for (const line of [...this.lines.values()]) this.pumpLine(line, snapshot);
  }

  /**
   * A waiter's timer fired: what only the sample shows (other isolates' requests ending) may have
   * freed a slot. Its line is pumped unless a timer pumped it just now.
   */
  looked(model: string, snapshot: HealthSnapshot | (() => HealthSnapshot), now: number): void {
    const line = this.lines.get(model);
    // A hold that is over is acted on at once: its waiter's timer fired for it.
    if (!line || (now - line.lastTimerPump < TIMER_PUMP_GAP_MS && !((line.held.nextEnd() ?? Infinity) <= now))) return;
    line.lastTimerPump = now;
    this.pumpLine(line, typeof snapshot === "function" ? snapshot() : snapshot);
  }

  /** How many wait for `model` (tests, the status page). */
  waiting(model: string): number {
    const line = this.lines.get(model);
    return line ? line.queue.size + line.held.size : 0;
  }

  /** How many wait for `model` above the batch class (the batch runner holds its lines back while any do). */
  interactiveWaiting(model: string): number {
    const line = this.lines.get(model);
    if (!line) return 0;
    let held = 0;
    for (const t of line.held.waiters()) if (t.priority > BATCH_TOP_LEVEL) held++;
    return line.queue.sizeAbove(BATCH_TOP_LEVEL) + held;
  }

  /** How many are served before `t` in its line (0 when it is not waiting). */
  ahead(t: Ticket): number {
    return this.lines.get(t.model)?.queue.ahead(t) ?? 0;
  }

  /**
   * `Retry-After` for `t` refused after its wait: those ahead of it and itself over the plan's known
   * slots, each taking the service its servers' answers suggest (the fastest; the default speeds
   * before any answer, and for a plan of browser sessions).
   */
  retryAfter(t: Ticket, snapshot: HealthSnapshot, now: number): number {
    const servers = [...new Set(t.plan.flatMap((s) => (s.server === null ? [] : [s.server])))];
    const slots = servers.reduce((n, s) => n + this.load(s, snapshot).slots, 0);
    const service = servers.length ? Math.min(...servers.map((s) => serviceEstimate(this.ledger(), s, null, now).service)) : serviceMs(0, DEFAULT_SPEEDS.completionTokens, DEFAULT_SPEEDS);
    return retryAfterSeconds(this.ahead(t), Math.max(1, slots), service);
  }

  /**
   * Turns while the head can start. `probe`: one waiter may go and try targets whose capacity is
   * unknown; only pumps driven by time or by a request ending probe, so arrivals and failed tries
   * do not become a storm of tries on a full hub.
   */
  private pumpLine(line: Line, snapshot: HealthSnapshot, probe = true): void {
    this.pumpHeld(line, snapshot);
    let probes = probe ? 1 : 0;
    for (let head = line.queue.peek(); head; head = line.queue.peek()) {
      const v = this.verdict(head, snapshot);
      if (v.kind === "full" || (v.kind === "unknown" && probes-- <= 0)) return;
      line.queue.shift();
      head.waited = true;
      this.grant(head, v);
      head.onTurn?.();
    }
    // An empty line is forgotten (in zero config any model name makes one).
    if (!line.held.size) this.lines.delete(line.model);
  }

  /**
   * Held waiters (Ticket.hold, home-holds.ts): each given its turn when its server has a slot free,
   * oldest first; one whose hold is over (or whose server left its plan) joins the line, first of its key.
   */
  private pumpHeld(line: Line, snapshot: HealthSnapshot, now = Date.now()): void {
    const over = line.held.settle(now, (t, server) => {
      const seat = t.plan.find((s) => s.server === server);
      const v = seat ? this.verdict(t, snapshot, [seat]) : undefined;
      if (v?.kind !== "free") return false;
      t.hold = null;
      t.waited = true;
      this.grant(t, v);
      t.onTurn?.();
      return true;
    });
    for (const t of over) {
      t.hold = null;
      t.waited = true;
      line.queue.pushFront(t, t.key, t.priority);
    }
  }

  private grant(t: Ticket, v: Verdict): void {
    t.granted = true;
    if (v.kind !== "free") return;
    t.reserved = v.server;
    this.reservations.set(v.server, (this.reservations.get(v.server) ?? 0) + 1);
  }

  /** Frees the slot held for `t`; whether there was one. */
  private release(t: Ticket): boolean {
    const server = t.reserved;
    if (server === null) return false;
    t.reserved = null;
    const n = (this.reservations.get(server) ?? 1) - 1;
    if (n > 0) this.reservations.set(server, n);
    else this.reservations.delete(server);
    return true;
  }

  private verdict(t: Ticket, snapshot: HealthSnapshot, plan = t.plan): Verdict {
    const hosts = this.hosts;
    if (!hosts) return verdictFor(plan, (server) => this.load(server, snapshot), undefined, 0, t.keepFree);
    const drains = this.drains();
    const draining = (server: string, model: string): Hosting => {
      const d = drains.get(server);
      return d !== undefined && d !== model ? { rank: "no", loadMs: 0 } : hosts(server, model);
    };
    return verdictFor(plan, (server) => this.load(server, snapshot), draining, Date.now() - t.arrivedAt, t.keepFree);
  }

  /**
   * Routers being drained for a waiting model (server → that model): a waiter whose model no router
   * of its plan has, and which none can load without evicting a model in use, has waited
   * DRAIN_AFTER_MS; the routers it could use then take no new request for another model, so their
   * models drain and it gets its turn. Without it, steady traffic for one model would keep the
   * others waiting until `queue.maxWaitMs` (the oldest such waiter first).
   */
  private drains(now = Date.now()): Map<string, string> {
    const drains = new Map<string, string>();
    const hosts = this.hosts;
    if (!hosts) return drains;
    const heads = [...this.lines.values()].flatMap((l) => {
      const head = l.queue.peek();
      return head && now - head.arrivedAt >= DRAIN_AFTER_MS ? [head] : [];
    });
    heads.sort((a, b) => a.arrivedAt - b.arrivedAt);
    for (const h of heads) {
      const seats = h.plan.filter((s): s is { server: string; model: string } => s.server !== null && s.model !== undefined);
      if (!seats.length || seats.some((s) => hosts(s.server, s.model).rank !== "no")) continue;
      for (const s of seats) if (!drains.has(s.server)) drains.set(s.server, s.model);
    }
    return drains;
  }

  private load(server: string, snapshot: HealthSnapshot): ServerLoad {
    return serverLoad(server, snapshot.upstreams[server], this.ledger(), this.reservations.get(server) ?? 0, this.learned(server));
  }

  private line(model: string): Line {
    let line = this.lines.get(model);
    if (!line) this.lines.set(model, (line = { model, queue: new FairQueue(), held: new HomeHolds(), lastTimerPump: 0 }));
    return line;
  }
}
