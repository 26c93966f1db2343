import { describe, expect, it } from "vitest";
import { CREDIT_TTL_MS, type Ask } from "../../../../src/routing/admission/hub-wire.ts";
import { GRANT_TTL_MS, PoolGrants } from "../../../../src/routing/admission/pool-grants.ts";

const ask = (id: string, over: Partial<Ask> = {}): Ask => ({ id, model: "m", key: id.replace(/\d+$/, ""), priority: 0, plan: ["s1", "s2"], slots: { s1: 1, s2: 1 }, conversation: null, ...over });

describe("PoolGrants", () => {
  it("never grants a server more than its slots, whichever isolate asks; an end gives the slot to the line", () => {
    const g = new PoolGrants();
    expect(g.ask(ask("a1"), 0)).toEqual({ id: "a1", server: "s1" });
    expect(g.ask(ask("a2"), 0)).toEqual({ id: "a2", server: "s2" });
    expect(g.ask(ask("a3"), 0)).toBeNull();
    expect(g.inflightOn("s1") + g.inflightOn("s2")).toBe(2);
    expect(g.end("a2", 1)).toEqual([{ id: "a3", server: "s2" }]);
    expect(g.inflightOn("s2")).toBe(1);
    // An end for a grant not held (sent twice, or after a restart) frees nothing.
    expect(g.end("a2", 2)).toEqual([]);
    expect(g.inflightOn("s2")).toBe(1);
  });

  it("a burst from one key does not hold back single requests of two others: keys take turns", () => {
    const g = new PoolGrants();
    const one = { plan: ["s1"], slots: { s1: 1 } };
    expect(g.ask(ask("a0", one), 0)).not.toBeNull();
    for (let i = 1; i <= 20; i++) expect(g.ask(ask(`a${i}`, one), i)).toBeNull();
    expect(g.ask(ask("b1", one), 30)).toBeNull();
    expect(g.ask(ask("c1", one), 31)).toBeNull();
    const order: string[] = [];
    let last = "a0";
    for (let n = 0; n < 21; n++) {
      const [next] = g.end(last, 100 + n);
      order.push(next!.id);
      last = next!.id;
    }
    expect(order.slice(0, 3)).toEqual(["a1", "b1", "c1"]);
  });

  it("a new request does not overtake the line, and a higher priority level goes first", () => {
    const g = new PoolGrants();
    const one = { plan: ["s1"], slots: { s1: 1 } };
    g.ask(ask("a1", one), 0);
    expect(g.ask(ask("a2", one), 1)).toBeNull();
    expect(g.ask(ask("v1", { ...one, priority: 5 }), 2)).toBeNull();
    expect(g.ahead("v1")).toBe(0);
    expect(g.ahead("a2")).toBe(1);
    expect(g.end("a1", 3)).toEqual([{ id: "v1", server: "s1" }]);
  });

  it("prefers the server holding the conversation's prompt, then the least loaded", () => {
    const g = new PoolGrants();
    const two = { slots: { s1: 2, s2: 2 } };
    expect(g.ask(ask("x1", { ...two, conversation: "conv" }), 0)?.server).toBe("s1");
    g.end("x1", 1);
    expect(g.ask(ask("y1", two), 2)?.server).toBe("s1");
    // s1 has one in flight, s2 none: the next goes to s2 … unless its conversation sits on s1.
    expect(g.ask(ask("x2", { ...two, conversation: "conv" }), 3)?.server).toBe("s1");
    expect(g.ask(ask("z1", two), 4)?.server).toBe("s2");
  });

  it("a waiter that left is out of the line; a grant never ended lapses after its TTL", () => {
    const g = new PoolGrants();
    const one = { plan: ["s1"], slots: { s1: 1 } };
    g.ask(ask("a1", one), 0);
    g.ask(ask("b1", one), 1);
    g.ask(ask("c1", one), 2);
    expect(g.leave("b1")).toBe(true);
    expect(g.waiting("b1")).toBe(false);
    expect(g.expire(GRANT_TTL_MS + 1)).toEqual([{ id: "c1", server: "s1" }]);
    expect(g.stats()).toEqual({ grants: 1, credits: 0, lateUses: 0, waiting: 0, servers: { s1: { slots: 1, inflight: 1 } } });
  });

  it("a server whose slot count no isolate knows yet counts as one", () => {
    const g = new PoolGrants();
    expect(g.ask(ask("a1", { plan: ["s9"], slots: {} }), 0)).not.toBeNull();
    expect(g.ask(ask("a2", { plan: ["s9"], slots: {} }), 0)).toBeNull();
    // An isolate that has read its count (2) lets the waiter through at its next ask or end.
    expect(g.ask(ask("b1", { plan: ["s9"], slots: { s9: 2 } }), 1)).toBeNull();
    expect(g.end("nothing", 2)).toEqual([{ id: "a2", server: "s9" }]);
  });
});

describe("PoolGrants, a model balanced ordered", () => {
  it("grants the first server of the plan with a slot free, whatever the others hold", () => {
    const g = new PoolGrants();
    const two = { slots: { s1: 2, s2: 2 }, ordered: true };
    expect(g.ask(ask("a1", two), 0)?.server).toBe("s1");
    expect(g.ask(ask("a2", two), 0)?.server).toBe("s1");
    expect(g.ask(ask("a3", two), 0)?.server).toBe("s2");
  });

  it("a server placement put back (circuit, context) is granted only when no other has a slot free, even holding the conversation", () => {
    const g = new PoolGrants();
    const two = { plan: ["tight", "roomy"], slots: { tight: 2, roomy: 2 } };
    expect(g.ask(ask("x1", { ...two, conversation: "conv" }), 0)?.server).toBe("tight");
    g.end("x1", 1);
    // The conversation's prompt is on tight, but this turn's max_tokens does not fit there.
    expect(g.ask(ask("x2", { ...two, conversation: "conv", demoted: ["tight"] }), 2)?.server).toBe("roomy");
    expect(g.ask(ask("x3", { ...two, conversation: "conv", demoted: ["tight"] }), 3)?.server).toBe("roomy");
    // roomy is full now: the put-back server is better than a wait.
    expect(g.ask(ask("x4", { ...two, conversation: "conv", demoted: ["tight"] }), 4)?.server).toBe("tight");
    // "ordered" takes the plan's order as placement gave it (an open circuit last).
    const h = new PoolGrants();
    expect(h.ask(ask("o1", { plan: ["good", "bad"], slots: { good: 1, bad: 1 }, ordered: true, demoted: ["bad"] }), 0)?.server).toBe("good");
  });

  it("take: the pass's next server (or the same again) after a failed attempt, at once if it has a slot free, never past its slots", () => {
    const g = new PoolGrants();
    const two = { plan: ["s1", "s2"], slots: { s1: 1, s2: 1 } };
    expect(g.ask(ask("a1", two), 0)?.server).toBe("s1");
    // The retry on s1 finds the slot its failed attempt left, even before that attempt's end arrives.
    expect(g.take(ask("a2", two), "s1", "a1", 1)).toEqual({ grant: { id: "a2", server: "s1" }, made: [] });
    expect(g.take(ask("a3", two), "s2", "a2", 2).grant).toEqual({ id: "a3", server: "s2" });
    expect(g.take(ask("b1", two), "s2", null, 3).grant).toBeNull();
    // A server not in the request's plan is never taken.
    expect(g.take(ask("b2", two), "s3", null, 4).grant).toBeNull();
    expect(g.stats().servers).toEqual({ s1: { slots: 1, inflight: 0 }, s2: { slots: 1, inflight: 1 } });
    // What the failed attempt leaves on another server goes to the line.
    expect(g.ask(ask("c1", { plan: ["s2"], slots: { s2: 1 } }), 5)).toBeNull();
    // (another model's request: c1's line would not let it overtake)
    expect(g.ask(ask("d1", { ...two, model: "other" }), 6)?.server).toBe("s1");
    expect(g.take(ask("d2", { ...two, model: "other" }), "s2", "d1", 7)).toEqual({ grant: null, made: [] });
    expect(g.end("a3", 8)).toEqual([{ id: "c1", server: "s2" }]);
  });
});

describe("PoolGrants, credits (an isolate's next request starts without asking)", () => {
  const four = { plan: ["s1", "s2"], slots: { s1: 4, s2: 1 } };

  it("gives one only on a server with a slot to spare besides it, and counts it as a grant until used", () => {
    const g = new PoolGrants();
    expect(g.ask(ask("a1", four), 0)?.server).toBe("s1");
    // s1: 1 in flight of 4, so a credit leaves 2 free; s2 has one slot: never a credit.
    const credits = g.credit(ask("a1", four), ["s1", "s2"], 0);
    expect(credits).toEqual([{ id: "credit:a1:s1", server: "s1", ttlMs: CREDIT_TTL_MS }]);
    expect(g.inflightOn("s1")).toBe(2);
    expect(g.stats()).toMatchObject({ grants: 1, credits: 1 });
    // Used: the request's grant, the credit gone; its end frees the slot.
    expect(g.use("credit:a1:s1", "s1", ask("b1", four), 10)).toEqual({ late: false });
    expect(g.inflightOn("s1")).toBe(2);
    expect(g.stats()).toMatchObject({ grants: 2, credits: 0, lateUses: 0 });
    g.end("b1", 20);
    expect(g.inflightOn("s1")).toBe(1);
  });

  it("never lets credits and grants together take a server's last slot: an ask still finds one", () => {
    const g = new PoolGrants();
    const only = { plan: ["s1"], slots: { s1: 3 } };
    g.ask(ask("a1", only), 0);
    expect(g.credit(ask("a1", only), ["s1"], 0)).toHaveLength(1);
    expect(g.credit(ask("b1", only), ["s1"], 0)).toHaveLength(0);
    expect(g.ask(ask("c1", only), 0)?.server).toBe("s1");
    expect(g.ask(ask("d1", only), 0)).toBeNull();
    expect(g.inflightOn("s1")).toBe(3);
  });

  it("gives none while anyone waits for the model, nor to a batch line, nor on a demoted server", () => {
    const g = new PoolGrants();
    const only = { plan: ["s1"], slots: { s1: 1 } };
    g.ask(ask("a1", only), 0);
    expect(g.ask(ask("a2", only), 0)).toBeNull();
    expect(g.credit(ask("x1", { plan: ["s1", "s2"], slots: { s1: 1, s2: 4 } }), ["s2"], 0)).toEqual([]);
    const h = new PoolGrants();
    expect(h.credit(ask("b1", { ...four, keepFree: 1 }), ["s1"], 0)).toEqual([]);
    expect(h.credit(ask("b2", { ...four, demoted: ["s1"] }), ["s1"], 0)).toEqual([]);
    expect(h.credit(ask("b3", four), ["s1"], 0)).toHaveLength(1);
  });

  it("an unused credit lapses and its slot goes to the line; a use that comes later is granted and counted late", () => {
    const g = new PoolGrants();
    const two = { plan: ["s1"], slots: { s1: 2 } };
    const [credit] = g.credit(ask("a1", two), ["s1"], 0);
    expect(g.ask(ask("b1", two), 1)?.server).toBe("s1");
    expect(g.ask(ask("c1", two), 2)).toBeNull();
    expect(g.nextLapse()).toBe(CREDIT_TTL_MS);
    expect(g.expire(CREDIT_TTL_MS)).toEqual([{ id: "c1", server: "s1" }]);
    expect(g.nextLapse()).toBeUndefined();
    expect(g.use(credit!.id, "s1", ask("a2", two), CREDIT_TTL_MS + 1)).toEqual({ late: true });
    expect(g.inflightOn("s1")).toBe(3);
    expect(g.stats().lateUses).toBe(1);
  });

  it("a credit that lapsed when another call arrives gives its slot to the line, and the hub is handed that grant to deliver", () => {
    const g = new PoolGrants();
    const two = { plan: ["s1"], slots: { s1: 2 } };
    g.credit(ask("a1", two), ["s1"], 0);
    expect(g.ask(ask("b1", two), 1)?.server).toBe("s1");
    expect(g.ask(ask("c1", two), 2)).toBeNull();
    // The next call (any ask) finds the credit lapsed: c1 is granted its slot, and the grant is kept for delivery.
    expect(g.ask(ask("d1", two), CREDIT_TTL_MS + 1)).toBeNull();
    expect(g.madeOnLapse()).toEqual([{ id: "c1", server: "s1" }]);
    expect(g.madeOnLapse()).toEqual([]);
  });

  it("a used credit places the conversation: its next ask prefers that server", () => {
    const g = new PoolGrants();
    const two = { plan: ["s1", "s2"], slots: { s1: 4, s2: 4 } };
    const [credit] = g.credit(ask("a1", two), ["s2"], 0);
    g.use(credit!.id, "s2", ask("x1", { ...two, conversation: "conv" }), 1);
    g.end("x1", 2);
    expect(g.ask(ask("x2", { ...two, conversation: "conv" }), 3)?.server).toBe("s2");
  });
});

describe("PoolGrants: a request held for its conversation's home (Ask.hold)", () => {
  const hold = (ms: number) => ({ hold: { server: "s1", ms } });

  it("is granted home when it has a slot, though the hub would have balanced it elsewhere", () => {
    const g = new PoolGrants();
    const two = { plan: ["s2", "s1"], slots: { s1: 2, s2: 2 } };
    expect(g.ask(ask("x1", { plan: ["s1"], slots: { s1: 2 } }), 0)?.server).toBe("s1");
    expect(g.ask(ask("a1", { ...two, ...hold(1000) }), 0)?.server).toBe("s1");
  });

  it("waits for home's slot while another server is free, keeps nobody else from that server, and gets home's slot when it frees", () => {
    const g = new PoolGrants();
    expect(g.ask(ask("x1", { plan: ["s1"] }), 0)?.server).toBe("s1"); // home full
    expect(g.ask(ask("a1", hold(2000)), 1)).toBeNull();
    expect(g.waiting("a1")).toBe(true);
    expect(g.nextLapse()).toBe(2001);
    // Someone else: the free server is theirs at once.
    expect(g.ask(ask("b1"), 2)?.server).toBe("s2");
    // Home's slot frees: the held request's grant.
    expect(g.end("x1", 3)).toEqual([{ id: "a1", server: "s1" }]);
    expect(g.waiting("a1")).toBe(false);
    expect(g.nextLapse()).toBeUndefined();
  });

  it("once its hold is over, takes its turn in line and any server's slot", () => {
    const g = new PoolGrants();
    g.ask(ask("x1", { plan: ["s1"] }), 0);
    g.ask(ask("y1", { plan: ["s2"] }), 0); // both full
    expect(g.ask(ask("a1", hold(500)), 1)).toBeNull();
    expect(g.end("y1", 2)).toEqual([]); // s2 frees: held for home, not taken
    expect(g.expire(600)).toEqual([{ id: "a1", server: "s2" }]);
    expect(g.inflightOn("s1") + g.inflightOn("s2")).toBe(2);
  });

  it("is not held when others wait in line (they are served in turn), and leaves like any waiter", () => {
    const g = new PoolGrants();
    const one = { plan: ["s1"], slots: { s1: 1 } };
    g.ask(ask("x1", one), 0);
    expect(g.ask(ask("y1", one), 0)).toBeNull(); // waits in line
    expect(g.ask(ask("a1", { ...one, ...hold(1000) }), 1)).toBeNull();
    expect(g.ahead("a1")).toBe(1); // in line behind y1, not held
    const h = new PoolGrants();
    h.ask(ask("x1", { plan: ["s1"] }), 0);
    expect(h.ask(ask("a1", hold(1000)), 1)).toBeNull();
    expect(h.leave("a1")).toBe(true);
    expect(h.waitingCount).toBe(0);
    expect(h.end("x1", 2)).toEqual([]);
  });
});

describe("PoolGrants: a hold names the home the hub knows", () => {
  it("an isolate that missed its conversation's move (made at another door) holds for the server the hub granted last, not the one it names", () => {
    const g = new PoolGrants();
    // The conversation's last turn went to s2 (from another isolate); its slot is still taken.
    expect(g.ask(ask("o1", { plan: ["s2"], conversation: "c" }), 0)?.server).toBe("s2");
    // This isolate still thinks s1 is home (free): the hub holds it for s2.
    expect(g.ask(ask("a1", { conversation: "c", hold: { server: "s1", ms: 1000 } }), 1)).toBeNull();
    expect(g.end("o1", 2)).toEqual([{ id: "a1", server: "s2" }]);
  });
});
