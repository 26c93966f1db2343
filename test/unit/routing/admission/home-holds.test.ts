import { describe, expect, it } from "vitest";
import { HomeHolds } from "../../../../src/routing/admission/home-holds.ts";

describe("HomeHolds", () => {
  it("gives each held waiter its server's slot in the order held, each slot once, and returns those whose hold is over", () => {
    const holds = new HomeHolds<string>();
    holds.add("a", { server: "s1", until: 100 });
    holds.add("b", { server: "s1", until: 300 });
    holds.add("c", { server: "s2", until: 50 });
    expect(holds.nextEnd()).toBe(50);
    let free = 1; // one slot on s1
    const given: string[] = [];
    const over = holds.settle(60, (w, server) => {
      if (server !== "s1" || free === 0) return false;
      free--;
      given.push(w);
      return true;
    });
    expect(given).toEqual(["a"]);
    expect(over).toEqual(["c"]);
    expect([...holds.waiters()]).toEqual(["b"]);
    expect(holds.nextEnd()).toBe(300);
    expect(holds.settle(300, () => true)).toEqual(["b"]);
    expect(holds.size).toBe(0);
    expect(holds.nextEnd()).toBeUndefined();
  });
});
