// A request held while every session for its model said it is not loaded: it looks again when the
// time passes, when a session announces itself, or stops when its client leaves (loading-holds.ts).
import { describe, expect, it } from "vitest";
import { HOLD_MAX_MS, LoadingHolds } from "../../../../src/upstreams/browser/loading-holds.ts";

describe("LoadingHolds", () => {
  it("a hold ends at its time", async () => {
    const holds = new LoadingHolds();
    const t = Date.now();
    expect(await holds.hold("a", 30)).toBe(true);
    expect(Date.now() - t).toBeGreaterThanOrEqual(25);
  });

  it("a session announcing itself ends every hold at once; a cancelled one says so", async () => {
    const holds = new LoadingHolds();
    const t = Date.now();
    const a = holds.hold("a", HOLD_MAX_MS);
    const b = holds.hold("b", HOLD_MAX_MS);
    expect(holds.cancel("b")).toBe(true);
    expect(await b).toBe(false);
    holds.announced();
    expect(await a).toBe(true);
    expect(Date.now() - t).toBeLessThan(HOLD_MAX_MS / 2);
    expect(holds.cancel("a")).toBe(false);
  });
});
