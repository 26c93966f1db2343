import { describe, expect, it } from "vitest";
import { GRANT_TTL_MS, PoolGrants, type Ask } from "../../../../src/routing/admission/pool-grants.ts";

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
    expect(g.stats()).toEqual({ grants: 1, waiting: 0, servers: { s1: { slots: 1, inflight: 1 } } });
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
});
