import { describe, expect, it } from "vitest";
import { FairQueue } from "../../../../src/routing/admission/fair-queue.ts";

/** Waiters named key+number, e.g. "a3": the third of key a. */
function fill(q: FairQueue<string>, key: string, n: number, priority = 0) {
  for (let i = 1; i <= n; i++) q.push(`${key}${i}`, key, priority);
}
const drain = (q: FairQueue<string>) => [...(function* () {
  for (let w = q.shift(); w !== undefined; w = q.shift()) yield w;
})()];

describe("FairQueue", () => {
  it("takes turns by key: a burst of 20 from one key does not hold back the others", () => {
    const q = new FairQueue<string>();
    fill(q, "a", 20);
    fill(q, "b", 3);
    fill(q, "c", 3);
    const served = drain(q);
    expect(served.slice(0, 9)).toEqual(["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]);
    expect(served.slice(9)).toEqual(Array.from({ length: 17 }, (_, i) => `a${i + 4}`));
  });

  it("is first come, first served within a key", () => {
    const q = new FairQueue<string>();
    fill(q, "a", 5);
    expect(drain(q)).toEqual(["a1", "a2", "a3", "a4", "a5"]);
  });

  it("a key that arrives late joins the end of the turns, then takes its turn every round", () => {
    const q = new FairQueue<string>();
    fill(q, "a", 4);
    fill(q, "b", 4);
    expect(q.shift()).toBe("a1");
    fill(q, "c", 2);
    expect(drain(q)).toEqual(["b1", "a2", "c1", "b2", "a3", "c2", "b3", "a4", "b4"]);
  });

  it("serves a higher priority level first, whatever waits below it", () => {
    const q = new FairQueue<string>();
    fill(q, "a", 3);
    fill(q, "vip", 2, 10);
    fill(q, "b", 1);
    fill(q, "low", 1, -1);
    expect(drain(q)).toEqual(["vip1", "vip2", "a1", "b1", "a2", "a3", "low1"]);
  });

  it("order() is what shift() would give, without taking anything; ahead() counts the waiters before one", () => {
    const q = new FairQueue<string>();
    fill(q, "a", 3);
    fill(q, "b", 2);
    fill(q, "p", 1, 1);
    const order = [...q.order()];
    expect(order).toEqual(["p1", "a1", "b1", "a2", "b2", "a3"]);
    expect(q.size).toBe(6);
    expect(q.ahead("b2")).toBe(4);
    expect(q.ahead("zz")).toBeUndefined();
    expect(drain(q)).toEqual(order);
  });

  it("remove() takes a waiter out from anywhere (a client that left) and keeps the rest in order", () => {
    const q = new FairQueue<string>();
    fill(q, "a", 2);
    fill(q, "b", 1);
    fill(q, "c", 2);
    expect(q.remove("b1")).toBe(true);
    expect(q.remove("b1")).toBe(false);
    expect(q.remove("a1")).toBe(true);
    expect(q.has("a1")).toBe(false);
    expect(drain(q)).toEqual(["a2", "c1", "c2"]);
    expect(q.size).toBe(0);
    expect(q.peek()).toBeUndefined();
  });

  it("pushFront() puts back a waiter whose turn could not start: first again, its key's turn restored", () => {
    const q = new FairQueue<string>();
    fill(q, "a", 2);
    fill(q, "b", 2);
    const taken = q.shift()!;
    expect(taken).toBe("a1");
    q.pushFront(taken, "a", 0);
    expect(drain(q)).toEqual(["a1", "b1", "a2", "b2"]);
    // A key with no one else left comes back first too.
    q.push("x1", "x", 0);
    q.push("y1", "y", 0);
    q.pushFront(q.shift()!, "x", 0);
    expect(drain(q)).toEqual(["x1", "y1"]);
  });
});
