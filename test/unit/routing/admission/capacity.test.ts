import { describe, expect, it } from "vitest";
import { CLOSED } from "../../../../src/health/circuit-breaker.ts";
import type { UpstreamHealth } from "../../../../src/health/upstream-health.ts";
import { retryAfterSeconds, serverLoad, verdictFor } from "../../../../src/routing/admission/capacity.ts";
import { ServerLedger } from "../../../../src/routing/placement/server-ledger.ts";

const S = "http://gpu-1";
const sampled = (slotsTotal: number, slotsBusy: number, readAt: number): UpstreamHealth => ({
  state: "ready",
  slotsTotal,
  slotsBusy,
  slotsReadAt: { from: readAt - 5, to: readAt },
  circuit: CLOSED,
  checkedAt: readAt + 1,
});

describe("serverLoad", () => {
  it("before any sample: ours in flight and held, against the slots read from /props, else one (a second of ours waits)", () => {
    const ledger = new ServerLedger();
    ledger.begin(S, null, 1000, 0);
    expect(serverLoad(S, undefined, ledger, 0)).toEqual({ slots: 1, busy: 1 });
    expect(serverLoad(S, { state: "unknown", circuit: CLOSED, checkedAt: 0 }, ledger, 2)).toEqual({ slots: 1, busy: 3 });
    expect(serverLoad(S, undefined, ledger, 0, 4)).toEqual({ slots: 4, busy: 1 });
    // The hub's sample, once it is there, is what counts.
    expect(serverLoad(S, sampled(2, 0, 1000), ledger, 0, 4)).toEqual({ slots: 2, busy: 1 });
  });

  it("counts ours in flight now, the sample's busy slots that were not ours, and the turns held for waiters", () => {
    const ledger = new ServerLedger();
    // Ours: one in flight since before the sample (the sample saw it), one begun after it.
    ledger.begin(S, null, 1000, 100);
    ledger.begin(S, null, 1000, 1500);
    // The sample at 1000 saw 3 busy: ours and 2 of other isolates'.
    expect(serverLoad(S, sampled(4, 3, 1000), ledger, 0)).toEqual({ slots: 4, busy: 2 + 2 });
    expect(serverLoad(S, sampled(4, 3, 1000), ledger, 1)).toEqual({ slots: 4, busy: 5 });
  });

  it("a request of ours that ended after the sample is not counted twice (it is neither in flight nor someone else's)", () => {
    const ledger = new ServerLedger();
    const end = ledger.begin(S, null, 1000, 100);
    end(true, 1200);
    expect(serverLoad(S, sampled(1, 1, 1000), ledger, 0)).toEqual({ slots: 1, busy: 0 });
  });

  it("others never go below zero (ours the sample missed)", () => {
    const ledger = new ServerLedger();
    ledger.begin(S, null, 1000, 100);
    ledger.begin(S, null, 1000, 100);
    expect(serverLoad(S, sampled(2, 1, 1000), ledger, 0)).toEqual({ slots: 2, busy: 2 });
  });

  it("without the read's time (an older hub), the second before checkedAt is the read", () => {
    const ledger = new ServerLedger();
    const end = ledger.begin(S, null, 1000, 100);
    end(true, 600);
    const h: UpstreamHealth = { state: "ready", slotsTotal: 1, slotsBusy: 1, circuit: CLOSED, checkedAt: 1000 };
    expect(serverLoad(S, h, ledger, 0)).toEqual({ slots: 1, busy: 0 });
  });
});

describe("verdictFor", () => {
  const loads: Record<string, { slots: number; busy: number }> = {
    full: { slots: 2, busy: 2 },
    free: { slots: 2, busy: 1 },
  };
  const load = (s: string) => loads[s]!;
  it("names the first llama-server in plan order with a slot free", () => {
    expect(verdictFor([{ server: "full" }, { server: "free" }], load)).toEqual({ kind: "free", server: "free" });
    expect(verdictFor([{ server: null }, { server: "free" }], load)).toEqual({ kind: "free", server: "free" });
  });
  it("is unknown when none is free but a target's capacity cannot be seen (a browser session)", () => {
    expect(verdictFor([{ server: "full" }, { server: null }], load)).toEqual({ kind: "unknown" });
  });
  it("is full only when every target is a llama-server with every slot taken", () => {
    expect(verdictFor([{ server: "full" }, { server: "full" }], load)).toEqual({ kind: "full" });
  });
  it("a router that cannot take the seat's model without evicting one in use is full for it, whatever its slots", () => {
    const hosts = (server: string, model: string) => ({ rank: server === "free" && model === "beta" ? ("no" as const) : ("present" as const), loadMs: 0 });
    expect(verdictFor([{ server: "free", model: "beta" }], load, hosts)).toEqual({ kind: "full" });
    expect(verdictFor([{ server: "free", model: "alpha" }], load, hosts)).toEqual({ kind: "free", server: "free" });
    expect(verdictFor([{ server: "free", model: "beta" }, { server: null }], load, hosts)).toEqual({ kind: "unknown" });
  });
  it("holds the slot where the model is loaded before one that would load it, whatever the plan order", () => {
    const both: Record<string, { slots: number; busy: number }> = { a: { slots: 1, busy: 0 }, b: { slots: 1, busy: 0 } };
    const hosts = (server: string, model: string) => ({ rank: (server === "b") === (model === "beta") ? ("present" as const) : ("load" as const), loadMs: 2000 });
    expect(verdictFor([{ server: "a", model: "beta" }, { server: "b", model: "beta" }], (s) => both[s]!, hosts)).toEqual({ kind: "free", server: "b" });
    expect(verdictFor([{ server: "a", model: "alpha" }, { server: "b", model: "alpha" }], (s) => both[s]!, hosts)).toEqual({ kind: "free", server: "a" });
  });
  it("a waiter whose model's router is full waits for it, until it has waited as long as a load elsewhere", () => {
    const loads: Record<string, { slots: number; busy: number }> = { a: { slots: 1, busy: 1 }, b: { slots: 1, busy: 0 } };
    const hosts = (server: string) => ({ rank: server === "a" ? ("present" as const) : ("load" as const), loadMs: 2000 });
    const plan = [{ server: "a", model: "alpha" }, { server: "b", model: "alpha" }];
    expect(verdictFor(plan, (s) => loads[s]!, hosts, 500)).toEqual({ kind: "full" });
    expect(verdictFor(plan, (s) => loads[s]!, hosts, 2500)).toEqual({ kind: "free", server: "b" });
  });
});

describe("retryAfterSeconds", () => {
  it("is the waiters ahead and itself over the slots, each an expected service, rounded up", () => {
    expect(retryAfterSeconds(0, 1, 4000)).toBe(4);
    expect(retryAfterSeconds(9, 2, 1500)).toBe(8); // 10 / 2 × 1.5 s = 7.5 s
    expect(retryAfterSeconds(3, 4, 2100)).toBe(3); // 4 / 4 × 2.1 s
  });
  it("is at least 1 s", () => {
    expect(retryAfterSeconds(0, 8, 50)).toBe(1);
    expect(retryAfterSeconds(0, 0, 0)).toBe(1);
  });
});
