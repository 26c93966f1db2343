// The day's arithmetic with reservations in flight, a request's output bound, and usage row labels.
import { describe, expect, it } from "vitest";
import { chargedTokens, dayRefusal, decideAdmission, requestedMaxTokens, reservationOf } from "../../../src/auth/limit-math.ts";
import { usageLabel } from "../../../src/auth/usage-label.ts";

const NOW = Date.UTC(2026, 0, 1, 12);

describe("the day with reservations in flight", () => {
  it("admits a reservation only while charged + reserved + it stays within the day", () => {
    const day = { tokensPerDay: 400 };
    expect(dayRefusal({ hits: [], leases: 2, tokensToday: 0, reserved: 222 }, day, NOW, 111)).toBeNull();
    expect(dayRefusal({ hits: [], leases: 3, tokensToday: 0, reserved: 333 }, day, NOW, 111)).toMatchObject({ ok: false, code: "tokens_per_day_exceeded", retryAfter: 1 });
    expect(dayRefusal({ hits: [], leases: 0, tokensToday: 289, reserved: 0 }, day, NOW, 111)).toBeNull();
    const spent = dayRefusal({ hits: [], leases: 0, tokensToday: 290, reserved: 0 }, day, NOW, 111);
    expect(spent).toMatchObject({ ok: false, code: "tokens_per_day_exceeded", retryAfter: 12 * 3600 });
    expect(spent && !spent.ok && spent.message).toContain("110 of its 400 tokens left");
  });

  it("admission counts what is reserved: nothing left while running requests hold the rest", () => {
    expect(decideAdmission({ hits: [], leases: 1, tokensToday: 100, reserved: 300 }, { tokensPerDay: 400 }, NOW, true)).toMatchObject({ ok: false, retryAfter: 1 });
    expect(decideAdmission({ hits: [], leases: 1, tokensToday: 100, reserved: 299 }, { tokensPerDay: 400 }, NOW, true)).toEqual({ ok: true });
  });

  it("a request's bound is the largest it sends; its reservation its prompt plus that per generation", () => {
    expect(requestedMaxTokens({})).toBeUndefined();
    expect(requestedMaxTokens({ max_tokens: null })).toBeUndefined();
    expect(requestedMaxTokens({ max_tokens: 10, max_completion_tokens: 300 })).toBe(300);
    // llama-server's own name counts when it is a count; its -1 ("no limit") is no bound.
    expect(requestedMaxTokens({ max_tokens: 5, n_predict: 40 })).toBe(40);
    expect(requestedMaxTokens({ max_tokens: 5, n_predict: -1 })).toBe(5);
    expect(requestedMaxTokens({ n_predict: -1 })).toBeUndefined();
    expect(reservationOf(41, 100)).toBe(111);
    expect(reservationOf(41, 100, 2)).toBe(211);
  });

  it("a usage report of anything but whole non-negative numbers is not believed: the estimate stands", () => {
    const seen = { promptChars: 40, completionChars: 8, completionDeltas: 2 };
    expect(chargedTokens({ ...seen, reported: { promptTokens: Number.NaN, completionTokens: 5 } })).toEqual({ promptTokens: 10, completionTokens: 2 });
    expect(chargedTokens({ ...seen, reported: { promptTokens: -3, completionTokens: 5 } })).toEqual({ promptTokens: 10, completionTokens: 2 });
    expect(chargedTokens({ ...seen, reported: { promptTokens: 3, completionTokens: 5 } })).toEqual({ promptTokens: 3, completionTokens: 5 });
  });
});

describe("usage row labels", () => {
  it("keeps a label of up to 256 characters whole; a longer one is bounded, and two long ones stay apart", () => {
    expect(usageLabel("m".repeat(256))).toBe("m".repeat(256));
    const a = usageLabel(`${"m".repeat(300)}a`);
    const b = usageLabel(`${"m".repeat(300)}b`);
    expect(a.length).toBeLessThanOrEqual(256);
    expect(a).not.toBe(b);
    expect(a.startsWith("m".repeat(200))).toBe(true);
  });
});
