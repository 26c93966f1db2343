import { describe, expect, it } from "vitest";
import { slotWaitMs } from "../../../../src/routing/placement/expected-finish.ts";

describe("slotWaitMs", () => {
  it("no wait while a slot is free", () => {
    expect(slotWaitMs({ slots: 2, inflight: [{ startedAt: 0, expectedMs: 500 }], unseen: 0, typicalMs: 0 }, 100)).toBe(0);
  });
  it("replays llama-server's queue: the earliest slot to free, after those queued before", () => {
    const inflight = [
      { startedAt: 0, expectedMs: 300 },
      { startedAt: 0, expectedMs: 500 },
    ];
    expect(slotWaitMs({ slots: 2, inflight, unseen: 0, typicalMs: 0 }, 100)).toBe(200);
    // A third request is queued: it takes the slot free at 200 for 400 ms; the next waits for 400.
    expect(slotWaitMs({ slots: 2, inflight: [...inflight, { startedAt: 50, expectedMs: 400 }], unseen: 0, typicalMs: 0 }, 100)).toBe(400);
  });
  it("an overrun estimate still holds its slot a little; requests only the sample saw count half done", () => {
    expect(slotWaitMs({ slots: 1, inflight: [{ startedAt: 0, expectedMs: 100 }], unseen: 0, typicalMs: 0 }, 1000)).toBe(10);
    expect(slotWaitMs({ slots: 1, inflight: [{ startedAt: 0, expectedMs: 200 }], unseen: 1, typicalMs: 0 }, 0)).toBe(100 + 200);
    expect(slotWaitMs({ slots: 1, inflight: [], unseen: 1, typicalMs: 300 }, 0)).toBe(150);
  });
});
