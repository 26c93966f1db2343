import { describe, expect, it } from "vitest";
import { CLOSED } from "../../../../src/health/circuit-breaker.ts";
import type { HealthSnapshot } from "../../../../src/health/upstream-health.ts";
import { AdmissionQueue } from "../../../../src/routing/admission/admission-queue.ts";
import { Ticket } from "../../../../src/routing/admission/ticket.ts";
import { ServerLedger } from "../../../../src/routing/placement/server-ledger.ts";

// Per-isolate admission plus the slot signal, simulated (docs/architecture.md, "Admission queue"):
// two isolates, each with its own ledger and queue, send to one llama-server. The server runs
// `slots` requests at once and queues the rest inside, first come first served, as llama-server
// does. The hub reads its /slots every second (busy = running + queued inside, as with --metrics);
// each isolate refreshes its copy of the hub's snapshot every second, at its own phase, so what an
// isolate knows of the other is one to two seconds old. Waiters look again every 300 ms, and a
// request ending in an isolate pumps that isolate's queue at once.
const S = "http://gpu-1";
const STEP = 10;

interface Run {
  /** Which key's request started on the server, in order (server-side start, not admission). */
  starts: string[];
  /** Most requests the server held at once (running + queued inside), and how long it held more than its slots. */
  maxHeld: number;
  overMs: number;
  /** Longest an over-subscription lasted. */
  longestOverMs: number;
  doneAt: number;
  /** Each isolate's admissions, by key, in order. */
  admitted: [string[], string[]];
  /** Longest wait from arrival to start, per isolate and key ("0a": key a's requests in isolate 0). */
  longestWait: Record<string, number>;
}

function simulate(opts: { slots: number; serviceMs: number; arrivals: Array<{ at: number; isolate: 0 | 1; key: string }>; until: number }): Run {
  const { slots, serviceMs } = opts;
  let now = 0;
  // The server: requests running (with their end) and queued inside.
  const running: Array<{ endsAt: number; done: () => void }> = [];
  const inside: Array<{ key: string; done: () => void }> = [];
  const starts: string[] = [];
  const admitted: [string[], string[]] = [[], []];
  const longestWait: Record<string, number> = {};
  const arrivedAt = new Map<Ticket, number>();
  let hub: HealthSnapshot = { at: 0, upstreams: {} };
  const isolates = [0, 1].map((n) => ({ phase: n === 0 ? 400 : 900, ledger: new ServerLedger(), snap: { at: 0, upstreams: {} } as HealthSnapshot, queue: undefined as unknown as AdmissionQueue, waiters: new Set<Ticket>() }));
  for (const iso of isolates) iso.queue = new AdmissionQueue(() => iso.ledger);

  const serverTake = (key: string, done: () => void) => {
    if (running.length < slots) {
      running.push({ endsAt: now + serviceMs, done });
      starts.push(key);
    } else inside.push({ key, done });
  };
  const begin = (iso: (typeof isolates)[number], t: Ticket) => {
    iso.waiters.delete(t);
    if (!iso.queue.mayStart(t, S, iso.snap)) {
      // The sample moved between the turn and the start: back in line.
      iso.queue.turnEnded(t, iso.snap);
      if (iso.queue.requeue(t, iso.snap)) begin(iso, t);
      else iso.waiters.add(t);
      return;
    }
    const end = iso.ledger.begin(S, null, serviceMs, now);
    admitted[isolates.indexOf(iso)]!.push(t.key);
    const w = now - arrivedAt.get(t)!;
    const k = `${isolates.indexOf(iso)}${t.key}`;
    longestWait[k] = Math.max(longestWait[k] ?? 0, w);
    iso.queue.turnEnded(t, iso.snap);
    serverTake(t.key, () => {
      end(true, now);
      iso.queue.pump(iso.snap);
    });
  };

  let maxHeld = 0;
  let overMs = 0;
  let overSince = -1;
  let longestOverMs = 0;
  let doneAt = 0;
  const pending = [...opts.arrivals].sort((a, b) => a.at - b.at);
  for (now = 0; now <= opts.until; now += STEP) {
    // The server finishes what is due and starts what queued inside.
    for (let i = running.length - 1; i >= 0; i--) {
      if (running[i]!.endsAt > now) continue;
      const [r] = running.splice(i, 1);
      r!.done();
      doneAt = now;
    }
    while (running.length < slots && inside.length) {
      const next = inside.shift()!;
      running.push({ endsAt: now + serviceMs, done: next.done });
      starts.push(next.key);
    }
    // The hub's sample, then each isolate's refresh of its copy.
    if (now % 1000 === 0) {
      const busy = running.length + inside.length;
      hub = { at: now, upstreams: { [S]: { state: "ready", slotsTotal: slots, slotsBusy: busy, slotsReadAt: { from: now, to: now }, circuit: CLOSED, checkedAt: now } } };
    }
    for (const iso of isolates) if (now % 1000 === iso.phase) iso.snap = hub;
    // Arrivals.
    while (pending.length && pending[0]!.at <= now) {
      const a = pending.shift()!;
      const iso = isolates[a.isolate]!;
      const t = new Ticket("m", a.key, 0, [{ server: S }]);
      arrivedAt.set(t, now);
      t.onTurn = () => begin(iso, t);
      iso.waiters.add(t);
      if (iso.queue.enter(t, iso.snap)) begin(iso, t);
    }
    // Waiters' timers.
    if (now % 300 === 0) for (const iso of isolates) if (iso.waiters.size) iso.queue.looked("m", iso.snap, now);
    const held = running.length + inside.length;
    maxHeld = Math.max(maxHeld, held);
    if (held > slots) {
      overMs += STEP;
      if (overSince < 0) overSince = now;
      longestOverMs = Math.max(longestOverMs, now - overSince + STEP);
    } else overSince = -1;
  }
  return { starts, maxHeld, overMs, longestOverMs, doneAt, admitted, longestWait };
}

/**
 * Key a bursts 20 (10 into each isolate) at once; b and c send 6 each a moment later, split too.
 * After 2 s: both isolates have a sample of the server by then (before it, slots are unknown and
 * nothing is gated).
 */
const T0 = 2000;
const burst = [
  ...Array.from({ length: 20 }, (_, i) => ({ at: T0, isolate: (i % 2) as 0 | 1, key: "a" })),
  ...Array.from({ length: 6 }, (_, i) => ({ at: T0 + 50 + i * 10, isolate: (i % 2) as 0 | 1, key: "b" })),
  ...Array.from({ length: 6 }, (_, i) => ({ at: T0 + 55 + i * 10, isolate: ((i + 1) % 2) as 0 | 1, key: "c" })),
];

describe("two isolates over one llama-server, each with its own admission queue and the /slots sample", () => {
  for (const slots of [1, 2, 4]) {
    it(`${slots} slot(s): keys take turns in each isolate, no key is starved, and the server is over its slots by at most one isolate's worth, for at most the sample's lag`, () => {
      const run = simulate({ slots, serviceMs: 400, arrivals: burst, until: 60_000 });
      const waits = Object.entries(run.longestWait).map(([k, ms]) => `${k} ${ms}`).join(", ");
      console.log(`slots ${slots}: server starts ${run.starts.join("")}; admitted by isolate 0 ${run.admitted[0].join("")}, 1 ${run.admitted[1].join("")}; longest waits (ms) ${waits}; held at most ${run.maxHeld}; over its slots ${run.overMs} ms in all (longest ${run.longestOverMs} ms) of ${run.doneAt - T0} ms`);
      expect(run.starts).toHaveLength(32);
      // Within an isolate, keys take turns: once b and c wait, a's burst gets one turn in three
      // (the a's before them went at once, on arrival, into free slots and a line of a's only).
      for (const order of run.admitted) {
        const from = order.findIndex((k) => k !== "a");
        const round = order.slice(from, from + 9);
        for (const key of ["a", "b", "c"]) expect(round.filter((k) => k === key).length, order.join("")).toBe(3);
      }
      // No key starved: b's and c's requests all start before a's burst is through.
      expect(Math.max(run.starts.lastIndexOf("b"), run.starts.lastIndexOf("c")), run.starts.join("")).toBeLessThan(run.starts.lastIndexOf("a"));
      // Over-subscription: both isolates may take the same free slot before either's sample shows
      // the other's request, so at most `slots` too many (each isolate alone never exceeds them),
      // and only until the next sample reaches the isolate (up to 2 s here) plus a service.
      expect(run.maxHeld).toBeLessThanOrEqual(2 * slots);
      expect(run.longestOverMs).toBeLessThanOrEqual(2000 + 400 + 2 * STEP);
    });
  }

  it("one isolate alone never puts more on the server than it has slots", () => {
    const alone = burst.map((a) => ({ ...a, isolate: 0 as const }));
    for (const slots of [1, 2, 4]) {
      const run = simulate({ slots, serviceMs: 400, arrivals: alone, until: 60_000 });
      expect(run.starts).toHaveLength(32);
      expect(run.maxHeld).toBeLessThanOrEqual(slots);
    }
  });
});
