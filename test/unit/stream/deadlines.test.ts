import { describe, expect, it } from "vitest";
import { type Clock, Deadlines, within } from "../../../src/lib/deadlines.ts";

/** A clock whose time moves only when told, counting the timers set and cleared. */
function manualClock() {
  let now = 1_000;
  let nextId = 1;
  const timers = new Map<number, { at: number; fire: () => void }>();
  const counts = { set: 0, cleared: 0 };
  const clock: Clock = {
    now: () => now,
    setTimeout(fire, ms) {
      counts.set++;
      const id = nextId++;
      timers.set(id, { at: now + ms, fire });
      return id;
    },
    clearTimeout(id) {
      if (timers.delete(id as number)) counts.cleared++;
    },
  };
  /** Moves time forward by `ms`, firing due timers in order. */
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      const due = [...timers].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      timers.delete(due[0]);
      now = due[1].at;
      due[1].fire();
    }
    now = end;
  };
  return { clock, counts, advance, armed: () => timers.size, at: () => now };
}

describe("Deadlines: one runtime timer for a request's deadlines", () => {
  it("fires each deadline at its time and not after it was cancelled", () => {
    const { clock, advance, at } = manualClock();
    const d = new Deadlines(Infinity, clock);
    const fired: Array<[string, number]> = [];
    d.after(100, () => fired.push(["a", at()]));
    const b = d.after(50, () => fired.push(["b", at()]));
    d.after(300, () => fired.push(["c", at()]));
    b.cancel();
    advance(1_000);
    expect(fired).toEqual([
      ["a", 1_100],
      ["c", 1_300],
    ]);
  });

  it("a request that ends before its earliest deadline sets one timer and clears it once", () => {
    const { clock, counts, armed } = manualClock();
    // As a non-stream request: response start (120 s), then the commit grace (600 ms, the horizon),
    // the first token (120 s), moved to idle (60 s) at each read; all cancelled as the answer ends.
    const d = new Deadlines(600, clock);
    const responseStart = d.after(120_000, () => {});
    const commit = d.after(600, () => {});
    responseStart.cancel();
    const reads = d.after(120_000, () => {});
    for (let i = 0; i < 20; i++) reads.reset(60_000);
    reads.cancel();
    expect(armed()).toBe(1);
    commit.cancel();
    expect(counts).toEqual({ set: 1, cleared: 1 });
    expect(armed()).toBe(0);
  });

  it("a deadline moved later fires at its new time (the timer re-armed when it fires early)", () => {
    const { clock, counts, advance, at } = manualClock();
    const d = new Deadlines(Infinity, clock);
    let firedAt = 0;
    const idle = d.after(100, () => (firedAt = at()));
    advance(60);
    idle.reset(100); // now due at 1_160
    advance(50); // the timer armed for 1_100 fires early and re-arms
    expect(firedAt).toBe(0);
    advance(100);
    expect(firedAt).toBe(1_160);
    expect(counts.set).toBe(2);
  });

  it("a deadline moved earlier than the armed time re-arms at once", () => {
    const { clock, advance, at } = manualClock();
    const d = new Deadlines(Infinity, clock);
    let firedAt = 0;
    const t = d.after(1_000, () => (firedAt = at()));
    t.reset(10);
    advance(20);
    expect(firedAt).toBe(1_010);
  });

  it("arms for the horizon first, and still fires later deadlines on time", () => {
    const { clock, counts, advance, at } = manualClock();
    const d = new Deadlines(600, clock);
    const fired: Array<[string, number]> = [];
    d.after(5_000, () => fired.push(["late", at()]));
    d.after(600, () => fired.push(["commit", at()]));
    advance(10_000);
    expect(fired).toEqual([
      ["commit", 1_600],
      ["late", 6_000],
    ]);
    expect(counts.set).toBe(2);
  });

  it("a nearer deadline set after the horizon was armed re-arms the timer", () => {
    const { clock, advance, at } = manualClock();
    const d = new Deadlines(600, clock);
    let firedAt = 0;
    d.after(5_000, () => {});
    d.after(100, () => (firedAt = at()));
    advance(200);
    expect(firedAt).toBe(1_100);
  });

  it("deadlines due together fire in one turn; one that fired stays fired", () => {
    const { clock, advance } = manualClock();
    const d = new Deadlines(Infinity, clock);
    let n = 0;
    const a = d.after(100, () => n++);
    d.after(100, () => n++);
    advance(100);
    expect(n).toBe(2);
    a.reset(100);
    advance(1_000);
    expect(n).toBe(2);
  });

  it("within: the work's value before the deadline (which is then cancelled), the timeout's error after it", async () => {
    const { clock, counts, advance } = manualClock();
    const d = new Deadlines(Infinity, clock);
    const late = () => {
      throw new Error("late");
    };
    await expect(within(Promise.resolve(7), 100, d, late)).resolves.toBe(7);
    expect(counts).toEqual({ set: 1, cleared: 1 });
    const never = within(new Promise<number>(() => {}), 100, d, late);
    advance(100);
    await expect(never).rejects.toThrow("late");
  });

  it("works on the runtime's own timer", async () => {
    const d = new Deadlines(5);
    const order: string[] = [];
    await new Promise<void>((resolve) => {
      d.after(30, () => {
        order.push("b");
        resolve();
      });
      d.after(5, () => order.push("a"));
      d.after(10, () => order.push("cancelled")).cancel();
    });
    expect(order).toEqual(["a", "b"]);
  });
});
