import { beforeEach, describe, expect, it } from "vitest";
import { SlotCounts } from "../../../../src/routing/admission/slot-counts.ts";
import { parseTotalSlots } from "../../../../src/health/parse-total-slots.ts";

const S = "http://gpu-1";

describe("slot counts read from /props", () => {
  let counts: SlotCounts;
  beforeEach(() => void (counts = new SlotCounts()));

  it("one read per server: a second request finds it in progress (and waits for it); then the count is known", async () => {
    let reads = 0;
    let answer!: (n: number | undefined) => void;
    const read = () => {
      reads++;
      return new Promise<number | undefined>((r) => (answer = r));
    };
    const first = counts.learn(S, read, 0)!;
    expect(first.started).toBe(true);
    const second = counts.learn(S, read, 10)!;
    expect(second.started).toBe(false);
    expect(second.reading).toBe(first.reading);
    expect(counts.learned(S)).toBeUndefined();
    answer(4);
    expect(await second.reading).toBe(true);
    expect(counts.learned(S)).toBe(4);
    expect(counts.learn(S, read, 1000)).toBeUndefined();
    expect(reads).toBe(1);
  });

  it("a read that told nothing is tried again after 30 s; a known count is read again after 10 min, kept meanwhile", async () => {
    expect(await counts.learn(S, async () => undefined, 0)!.reading).toBe(false);
    expect(counts.learn(S, async () => 2, 29_000)).toBeUndefined();
    expect(await counts.learn(S, async () => 2, 30_000)!.reading).toBe(true);
    expect(counts.learn(S, async () => 3, 60_000)).toBeUndefined();
    const again = counts.learn(S, async () => undefined, 30_000 + 600_000)!;
    expect(await again.reading).toBe(false);
    expect(counts.learned(S)).toBe(2);
  });

  it("parses llama-server's /props total_slots, and nothing else", () => {
    expect(parseTotalSlots({ total_slots: 4, model_alias: "m" })).toBe(4);
    for (const bad of [{}, { total_slots: 0 }, { total_slots: "4" }, { total_slots: 1.5 }, null, "x"]) expect(parseTotalSlots(bad)).toBeUndefined();
  });
});
