import { describe, expect, it } from "vitest";
import { advanceReservation, chargedTokens, dayOf, dayRefusal, embeddingInputTokens, decideAdmission, FAR_HEADROOM, FAR_SHARE, positiveInt, secondsUntilNextDay } from "../../../src/auth/limit-math.ts";

const NOW = Date.UTC(2026, 4, 1, 23, 59, 0);

describe("admission", () => {
  it("admits under every limit", () => {
    expect(decideAdmission({ hits: [], leases: 0, tokensToday: 0 }, { rpm: 1, concurrency: 1, tokensPerDay: 1 }, NOW, true)).toEqual({ ok: true });
    expect(decideAdmission({ hits: [1, 2, 3], leases: 9, tokensToday: 9 }, {}, NOW, true)).toEqual({ ok: true });
  });

  it("refuses over rpm with Retry-After until the oldest counted hit leaves the window", () => {
    const hits = [NOW - 59_000, NOW - 30_000, NOW - 1_000];
    const d = decideAdmission({ hits, leases: 0, tokensToday: 0 }, { rpm: 3 }, NOW, false);
    expect(d).toMatchObject({ ok: false, code: "rate_limit_exceeded", retryAfter: 1 });
    const d2 = decideAdmission({ hits, leases: 0, tokensToday: 0 }, { rpm: 2 }, NOW, false);
    expect(d2).toMatchObject({ ok: false, retryAfter: 30 });
  });

  it("the KeyGate's reading (the count and only the rpm-th newest hit) decides as all the hits do", () => {
    const all = [NOW - 59_000, NOW - 30_000, NOW - 1_000];
    for (const rpm of [1, 2, 3, 4]) {
      const read = { hits: all.length >= rpm ? [all[all.length - rpm]!] : [], hitCount: all.length, leases: 0, tokensToday: 0 };
      expect(decideAdmission(read, { rpm }, NOW, false)).toEqual(decideAdmission({ hits: all, leases: 0, tokensToday: 0 }, { rpm }, NOW, false));
    }
  });

  it("refuses over concurrency only when a slot is wanted", () => {
    expect(decideAdmission({ hits: [], leases: 2, tokensToday: 0 }, { concurrency: 2 }, NOW, true)).toMatchObject({ ok: false, code: "concurrency_limit_exceeded" });
    expect(decideAdmission({ hits: [], leases: 2, tokensToday: 0 }, { concurrency: 2 }, NOW, false)).toEqual({ ok: true });
  });

  it("refuses over tokens per day until midnight UTC", () => {
    const d = decideAdmission({ hits: [], leases: 0, tokensToday: 100 }, { tokensPerDay: 100 }, NOW, true);
    expect(d).toMatchObject({ ok: false, code: "tokens_per_day_exceeded", retryAfter: 60 });
    expect(dayOf(NOW)).toBe("2026-05-01");
    expect(secondsUntilNextDay(NOW)).toBe(60);
  });
});

describe("charged tokens", () => {
  it("uses the upstream's count when it reported one", () => {
    expect(chargedTokens({ reported: { promptTokens: 10, completionTokens: 5 }, promptChars: 999, completionChars: 999, completionDeltas: 99 })).toEqual({ promptTokens: 10, completionTokens: 5 });
  });
  it("estimates an aborted or failed stream from what it generated", () => {
    expect(chargedTokens({ promptChars: 400, completionChars: 40, completionDeltas: 3 })).toEqual({ promptTokens: 100, completionTokens: 10 });
    expect(chargedTokens({ promptChars: 400, completionChars: 8, completionDeltas: 7 })).toEqual({ promptTokens: 100, completionTokens: 7 });
  });
  it("charges nothing for a request that never reached a model", () => {
    expect(chargedTokens({ promptChars: 400, completionChars: 0, completionDeltas: 0 })).toEqual({ promptTokens: 0, completionTokens: 0 });
  });
  it("charges an answer its server's chat parser refused at least its bound: the server generated to its end and said neither how much nor usage", () => {
    expect(chargedTokens({ promptChars: 400, completionChars: 40, completionDeltas: 3, refusedBound: 80 })).toEqual({ promptTokens: 100, completionTokens: 80 });
    // Refused before anything was sent: still generated.
    expect(chargedTokens({ promptChars: 400, completionChars: 0, completionDeltas: 0, refusedBound: 80 })).toEqual({ promptTokens: 100, completionTokens: 80 });
    // More counted than the bound (deltas of a continuation and the text before it): the count stands.
    expect(chargedTokens({ promptChars: 400, completionChars: 400, completionDeltas: 90, refusedBound: 80 })).toEqual({ promptTokens: 100, completionTokens: 100 });
  });
});

it("reads positive integer limits", () => {
  expect(positiveInt("60")).toBe(60);
  expect(positiveInt(4)).toBe(4);
  expect(positiveInt("0")).toBeUndefined();
  expect(positiveInt("1.5")).toBeUndefined();
  expect(positiveInt("")).toBeUndefined();
});

describe("embeddingInputTokens (what an embeddings request reserves)", () => {
  it("estimates each string from its characters and counts token arrays exactly", () => {
    expect(embeddingInputTokens("a".repeat(100))).toBe(25);
    expect(embeddingInputTokens(["a".repeat(100), "b", ""])).toBe(26);
    expect(embeddingInputTokens([1, 2, 3])).toBe(3);
    expect(embeddingInputTokens([[1, 2], [3]])).toBe(3);
    expect(embeddingInputTokens(null)).toBe(0);
  });
});

describe("advanceReservation (a day far from its limit, reserved at admission)", () => {
  it("none without a day limit, or with less than FAR_HEADROOM left once charges and reservations are counted", () => {
    expect(advanceReservation({ hits: [], leases: 0, tokensToday: 0 }, { rpm: 5 })).toBe(0);
    expect(advanceReservation({ hits: [], leases: 0, tokensToday: 0 }, { tokensPerDay: FAR_HEADROOM - 1 })).toBe(0);
    expect(advanceReservation({ hits: [], leases: 1, tokensToday: 500_000, reserved: 500_001 }, { tokensPerDay: 2 * FAR_HEADROOM })).toBe(0);
  });

  it("1/FAR_SHARE of what is left when far; holds taking it one after another never pass the limit", () => {
    expect(advanceReservation({ hits: [], leases: 0, tokensToday: 0 }, { tokensPerDay: FAR_HEADROOM })).toBe(Math.floor(FAR_HEADROOM / FAR_SHARE));
    const limits = { tokensPerDay: 10 * FAR_HEADROOM };
    const state = { hits: [], leases: 0, tokensToday: 3 * FAR_HEADROOM, reserved: 0 };
    for (let i = 0; i < 10_000; i++) {
      const advance = advanceReservation(state, limits);
      if (advance === 0) break;
      // Each advance fits the day as an exact reservation would.
      expect(dayRefusal(state, limits, NOW, advance)).toBeNull();
      state.reserved += advance;
      state.leases++;
    }
    expect(state.tokensToday + state.reserved).toBeLessThanOrEqual(limits.tokensPerDay);
    expect(limits.tokensPerDay - state.tokensToday - state.reserved).toBeLessThan(FAR_HEADROOM);
  });
});
