import { describe, expect, it, vi } from "vitest";
import { CLOSED } from "../../../../src/health/circuit-breaker.ts";
import type { HealthSnapshot } from "../../../../src/health/upstream-health.ts";
import { AdmissionQueue } from "../../../../src/routing/admission/admission-queue.ts";
import { Ticket } from "../../../../src/routing/admission/ticket.ts";
import type { Seat } from "../../../../src/routing/admission/capacity.ts";
import { ServerLedger } from "../../../../src/routing/placement/server-ledger.ts";

const S = "http://gpu-1";
/** A snapshot in which S has `slots` slots, none busy by the sample (only our own requests, from the ledger, count). */
const snapshot = (slots: number | undefined): HealthSnapshot => ({
  at: 0,
  upstreams: slots === undefined ? {} : { [S]: { state: "ready", slotsTotal: slots, slotsBusy: 0, slotsReadAt: { from: 0, to: 0 }, circuit: CLOSED, checkedAt: 0 } },
});
const onS: Seat[] = [{ server: S }];

/** An isolate's queue and ledger, and requests that start (in the ledger) as soon as they get their turn. */
function isolate(slots: number | undefined, plan: Seat[] = onS) {
  const ledger = new ServerLedger();
  const queue = new AdmissionQueue(() => ledger);
  const snap = snapshot(slots);
  const started: string[] = [];
  const ends = new Map<string, () => void>();
  const start = (name: string, t: Ticket) => {
    expect(queue.mayStart(t, S, snap)).toBe(true);
    const end = ledger.begin(S, null, 1000, 0);
    queue.turnEnded(t, snap);
    started.push(name);
    ends.set(name, () => {
      end(true, 0);
      queue.pump(snap);
    });
  };
  const arrive = (name: string, key: string, priority = 0) => {
    const t = new Ticket("m", key, priority, plan);
    t.onTurn = () => start(name, t);
    if (queue.enter(t, snap)) start(name, t);
    return t;
  };
  return { ledger, queue, snap, started, arrive, end: (name: string) => ends.get(name)!() };
}

describe("AdmissionQueue", () => {
  it("lets a request start at once while a slot is free, and holds that slot so one arriving in the same instant waits", () => {
    const i = isolate(1);
    const t1 = new Ticket("m", "a", 0, onS);
    const t2 = new Ticket("m", "b", 0, onS);
    expect(i.queue.enter(t1, i.snap)).toBe(true);
    expect(t1.reserved).toBe(S);
    expect(i.queue.enter(t2, i.snap)).toBe(false);
    expect(i.queue.waiting("m")).toBe(1);
    // The first starts: its place in the ledger replaces the held slot; the server is still full.
    expect(i.queue.mayStart(t1, S, i.snap)).toBe(true);
    expect(t1.reserved).toBeNull();
    i.ledger.begin(S, null, 1000, 0);
    expect(i.queue.mayStart(t2, S, i.snap)).toBe(false);
  });

  it("gives each freed slot to the next waiter in fair order: keys take turns, one key's burst does not starve the others", () => {
    const i = isolate(1);
    for (let n = 1; n <= 6; n++) i.arrive(`a${n}`, "a");
    i.arrive("b1", "b");
    i.arrive("b2", "b");
    i.arrive("c1", "c");
    expect(i.started).toEqual(["a1"]);
    for (let n = 0; n < 8; n++) i.end(i.started.at(-1)!);
    expect(i.started).toEqual(["a1", "a2", "b1", "c1", "a3", "b2", "a4", "a5", "a6"]);
  });

  it("never lets a newcomer overtake a waiter, even in the instant a slot frees", () => {
    const i = isolate(1);
    i.arrive("a1", "a");
    i.arrive("a2", "a");
    // a1 ends and a2 gets the slot before anyone new is looked at; the newcomer waits behind.
    i.end("a1");
    i.arrive("b1", "b");
    expect(i.started).toEqual(["a1", "a2"]);
    expect(i.queue.waiting("m")).toBe(1);
  });

  it("serves a higher priority first", () => {
    const i = isolate(1);
    i.arrive("a1", "a");
    i.arrive("a2", "a");
    i.arrive("vip1", "vip", 5);
    i.end("a1");
    expect(i.started).toEqual(["a1", "vip1"]);
  });

  it("a waiter that leaves (client gone) is out of the line at once; a slot held for it goes to the next", () => {
    const i = isolate(1);
    i.arrive("a1", "a");
    const gone = i.arrive("b1", "b");
    i.arrive("c1", "c");
    i.queue.leave(gone, i.snap);
    expect(i.queue.waiting("m")).toBe(1);
    i.end("a1");
    expect(i.started).toEqual(["a1", "c1"]);
    // Given a turn (a slot held) but gone before starting: the slot is free again for the next.
    const held = new Ticket("m", "d", 0, onS);
    const next = new Ticket("m", "e", 0, onS);
    let nextTurn = false;
    next.onTurn = () => (nextTurn = true);
    i.end("c1");
    expect(i.queue.enter(held, i.snap)).toBe(true);
    expect(i.queue.enter(next, i.snap)).toBe(false);
    i.queue.leave(held, i.snap);
    expect(nextTurn).toBe(true);
  });

  it("a server never sampled is taken to have one slot: the first goes, the rest wait in line (keys in turn) until it ends", () => {
    const i = isolate(undefined);
    for (let n = 1; n <= 3; n++) i.arrive(`a${n}`, "a");
    i.arrive("b1", "b");
    expect(i.started).toEqual(["a1"]);
    expect(i.queue.waiting("m")).toBe(3);
    i.end("a1");
    i.end("a2");
    expect(i.started).toEqual(["a1", "a2", "b1"]);
  });

  it("a server never sampled whose /props count this isolate read is gated on that count", () => {
    const ledger = new ServerLedger();
    const queue = new AdmissionQueue(() => ledger, (server) => (server === S ? 3 : undefined));
    const snap = snapshot(undefined);
    const started = ["a", "b", "c", "d"].filter((k) => {
      const t = new Ticket("m", k, 0, onS);
      if (!queue.enter(t, snap)) return false;
      expect(queue.mayStart(t, S, snap)).toBe(true);
      ledger.begin(S, null, 1000, 0);
      return true;
    });
    expect(started).toEqual(["a", "b", "c"]);
    expect(queue.waiting("m")).toBe(1);
  });

  it("targets whose capacity is unknown (a browser session) are tried by one waiter a pump, not by the whole line at once", () => {
    const ledger = new ServerLedger();
    const queue = new AdmissionQueue(() => ledger);
    const snap = snapshot(undefined);
    const browser: Seat[] = [{ server: null }];
    const tickets = ["a", "b", "c"].map((k) => new Ticket("m", k, 0, browser));
    // A first try that found the hub full puts each back in line.
    for (const t of tickets) {
      expect(queue.enter(t, snap)).toBe(true);
    }
    const turns: string[] = [];
    for (const t of tickets) t.onTurn = () => turns.push(t.key);
    // Each finds the hub full; trying again at once would only find it full again.
    for (const t of tickets) expect(queue.requeue(t, snap)).toBe(false);
    expect(queue.waiting("m")).toBe(3);
    // A request ending, or a waiter's timer: one of them tries, in turn.
    queue.pump(snap);
    expect(turns).toEqual(["a"]);
    queue.looked("m", snap, 1000);
    queue.looked("m", snap, 1050); // a second waiter's timer right after: nothing new
    expect(turns).toEqual(["a", "b"]);
    // a's turn found the hub full again: it is first in line again, before c.
    expect(queue.requeue(tickets[0]!, snap)).toBe(false);
    queue.looked("m", snap, 1300);
    expect(turns).toEqual(["a", "b", "a"]);
  });

  it("Retry-After: those ahead and itself over the slots, at the ledger's expected service", () => {
    const i = isolate(2);
    for (let n = 1; n <= 2; n++) i.arrive(`a${n}`, "a");
    const waiting = Array.from({ length: 5 }, (_, n) => i.arrive(`b${n}`, "b"));
    // Default speeds: 256 tokens at 30 tokens/s = 8.53 s a request; the last has 4 ahead: 5 / 2 × 8.53 s.
    expect(i.queue.ahead(waiting[4]!)).toBe(4);
    expect(i.queue.retryAfter(waiting[4]!, i.snap, 0)).toBe(22);
    expect(i.queue.retryAfter(waiting[0]!, i.snap, 0)).toBe(5);
  });
});

describe("AdmissionQueue on a router (--models-max 1): a model waiting for a swap is not starved", () => {
  it("new requests for the loaded model are admitted until a waiter for another model has waited 2 s; then the router drains for it", async () => {
    const { vi } = await import("vitest");
    const { ModelPool } = await import("../../../../src/routing/placement/model-pool.ts");
    vi.useFakeTimers();
    try {
      vi.setSystemTime(1_000_000);
      const ledger = new ServerLedger();
      const pool = new ModelPool();
      pool.absorb(S, { modelsMax: 1, models: [{ id: "alpha", status: "loaded", failed: false }, { id: "beta", status: "unloaded", failed: false }] }, 0);
      const queue = new AdmissionQueue(() => ledger, () => 4, (server, model) => pool.hosting(server, model, Date.now()));
      const snap = snapshot(4);
      const ticket = (model: string) => new Ticket(model, "", 0, [{ server: S, model }]);
      const run = (t: Ticket, model: string) => {
        expect(queue.mayStart(t, S, snap)).toBe(true);
        const inPool = pool.begin(S, model, Date.now());
        const end = ledger.begin(S, null, 1000, Date.now());
        queue.turnEnded(t, snap);
        return () => {
          inPool.served(Date.now());
          inPool.end(Date.now());
          end(true, Date.now());
          queue.pump(snap);
        };
      };
      const a1 = ticket("alpha");
      expect(queue.enter(a1, snap)).toBe(true);
      const endA1 = run(a1, "alpha");
      const b = ticket("beta");
      expect(queue.enter(b, snap)).toBe(false); // alpha is in use: beta would evict it
      vi.setSystemTime(1_000_500);
      const a2 = ticket("alpha");
      expect(queue.enter(a2, snap)).toBe(true); // beta has not waited long: alpha keeps being served
      const endA2 = run(a2, "alpha");
      vi.setSystemTime(1_002_100);
      const a3 = ticket("alpha");
      expect(queue.enter(a3, snap)).toBe(false); // beta has waited 2 s: the router drains for it
      endA1();
      expect(b.granted).toBe(false); // a2 still in flight
      endA2();
      expect(b.granted).toBe(true);
      expect(queue.ahead(a3)).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

});

describe("AdmissionQueue: a waiter held for its conversation's home", () => {
  it("holds a waiter for its home's slot while another server is free, without keeping anyone else from that server; then lets it move", () => {
    vi.useFakeTimers({ now: 1_000_000, toFake: ["Date"] });
    try {
      const H = "http://home";
      const O = "http://other";
      const snap: HealthSnapshot = {
        at: 0,
        upstreams: Object.fromEntries([H, O].map((s) => [s, { state: "ready" as const, slotsTotal: 1, slotsBusy: 0, slotsReadAt: { from: 0, to: 0 }, circuit: CLOSED, checkedAt: 0 }])),
      };
      const ledger = new ServerLedger();
      const queue = new AdmissionQueue(() => ledger);
      const plan: Seat[] = [{ server: O }, { server: H }];
      const endHome = ledger.begin(H, null, 1000, Date.now()); // home's one slot is taken
      // The held request's pass found home full: it goes back to the line held for home for 2 s.
      const held = new Ticket("m", "a", 0, plan);
      expect(queue.enter(held, snap)).toBe(true);
      expect(held.reserved).toBe(O); // its first turn came with the free server
      held.hold = { server: H, until: Date.now() + 2000 };
      expect(queue.requeue(held, snap)).toBe(false);
      expect(queue.waiting("m")).toBe(1);
      // Someone else arrives: the free server is theirs at once, though the held one came first.
      const other = new Ticket("m", "b", 0, plan);
      expect(queue.enter(other, snap)).toBe(true);
      expect(other.reserved).toBe(O);
      expect(queue.mayStart(other, O, snap)).toBe(true);
      const endOther = ledger.begin(O, null, 1000, Date.now());
      // Home's slot frees: the held request's turn, with that slot held for it.
      endHome(true, Date.now());
      queue.pump(snap);
      expect(held.granted).toBe(true);
      expect(held.reserved).toBe(H);
      expect(held.hold).toBeNull();
      expect(queue.mayStart(held, H, snap)).toBe(true);
      const endHeld = ledger.begin(H, null, 1000, Date.now());
      // A second hold that runs out: the waiter then takes any server's slot, first of its key.
      const late = new Ticket("m", "c", 0, plan);
      expect(queue.enter(late, snap)).toBe(false); // both servers full
      endOther(true, Date.now());
      queue.pump(snap);
      expect(late.reserved).toBe(O); // its turn, with the other server's slot
      late.hold = { server: H, until: Date.now() + 500 };
      expect(queue.requeue(late, snap)).toBe(false);
      expect(late.granted).toBe(false); // the other server is free, but it is held for home
      expect(late.reserved).toBeNull();
      vi.setSystemTime(Date.now() + 600);
      queue.looked("m", snap, Date.now());
      expect(late.granted).toBe(true);
      expect(late.reserved).toBe(O);
      expect(late.hold).toBeNull();
      endHeld(true, Date.now());
      expect(queue.waiting("m")).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
