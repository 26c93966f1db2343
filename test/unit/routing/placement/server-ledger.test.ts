import { describe, expect, it } from "vitest";
import { promptPrefixes } from "../../../../src/routing/placement/prompt-prefixes.ts";
import { DEFAULT_SPEEDS, ServerLedger } from "../../../../src/routing/placement/server-ledger.ts";

const turn = (n: number) => {
  const messages: Array<{ role: string; content: string }> = [{ role: "system", content: "agent" }, { role: "user", content: "task" }];
  for (let i = 1; i < n; i++) messages.push({ role: "assistant", content: `a${i}` }, { role: "user", content: `u${i}` });
  return promptPrefixes(messages);
};

describe("ServerLedger", () => {
  it("holds the longest prefix a server served, within the idle window", () => {
    const l = new ServerLedger({ prefixesPerServer: 100, idleMs: 10_000 });
    l.served("A", turn(2), 0);
    const next = turn(3);
    expect(l.heldChars("A", next, 1000)).toBe(turn(2).at(-1)!.chars);
    expect(l.heldChars("B", next, 1000)).toBe(0);
    expect(l.heldChars("A", next, 10_000)).toBe(0);
  });
  it("forgets the least recently served prefixes past its capacity", () => {
    const l = new ServerLedger({ prefixesPerServer: 3, idleMs: 10_000 });
    l.served("A", turn(1), 0); // 2 prefixes
    l.served("A", promptPrefixes([{ role: "user", content: "other" }, { role: "user", content: "x" }]), 1);
    expect(l.heldChars("A", turn(1).slice(0, 1), 2)).toBe(0); // the first served, the first forgotten
    expect(l.heldChars("A", turn(1), 2)).toBe(turn(1)[1]!.chars);
  });
  it("a conversation lives where its latest turn was placed; a failed attempt puts it back", () => {
    const l = new ServerLedger();
    l.begin("A", "k", 100, 0)();
    expect(l.homeOf("k", 1)).toBe("A");
    const end = l.begin("B", "k", 100, 2);
    expect(l.homeOf("k", 3)).toBe("B");
    expect(l.conversationCount("A", 3)).toBe(0);
    end(false);
    expect(l.homeOf("k", 4)).toBe("A");
    expect(l.conversationCount("B", 4)).toBe(0);
    l.begin("B", "k", 100, 5)(true);
    expect(l.homeOf("k", 6)).toBe("B");
    expect(l.homeOf(null, 6)).toBeUndefined();
  });
  it("counts its requests in flight until each ends (once)", () => {
    const l = new ServerLedger();
    const a = l.begin("A", null, 100, 0);
    const b = l.begin("A", null, 200, 5);
    expect(l.inflight("A")).toEqual([{ startedAt: 0, expectedMs: 100 }, { startedAt: 5, expectedMs: 200 }]);
    a();
    a();
    expect(l.inflight("A")).toEqual([{ startedAt: 5, expectedMs: 200 }]);
    b();
    expect(l.inflight("A")).toEqual([]);
  });
  it("tells how many of its requests were in flight at a sample's time", () => {
    const l = new ServerLedger();
    l.begin("A", null, 100, 0)(true, 500);
    const open = l.begin("A", null, 100, 300);
    expect([l.busyAt("A", 100), l.busyAt("A", 400), l.busyAt("A", 600), l.busyAt("A", 200)]).toEqual([1, 2, 1, 1]);
    open(true, 700);
    expect(l.busyAt("A", 650)).toBe(1);
    expect(l.busyAt("A", 800)).toBe(0);
    expect(l.busyAt("B", 100)).toBe(0);
  });
  it("learns speeds from timings big enough to measure a rate", () => {
    const l = new ServerLedger();
    expect(l.speeds("A")).toEqual(DEFAULT_SPEEDS);
    l.learn("A", { chars: 1000, promptTokens: 500, promptProcessed: 10, promptMs: 100, predictedTokens: 4, predictedMs: 100 });
    expect(l.speeds("A").promptTps).toBe(DEFAULT_SPEEDS.promptTps); // 10 tokens: overhead, not rate
    expect(l.speeds("A").genTps).toBe(DEFAULT_SPEEDS.genTps);
    expect(l.speeds("A").tokensPerChar).toBe(0.5); // the first measure replaces the default outright
    expect(l.tokenModel("A").learned).toBe(true);
    expect(l.tokenModel("B").learned).toBe(false);
    for (let i = 0; i < 40; i++) l.learn("A", { chars: 1000, promptTokens: 500, promptProcessed: 4000, promptMs: 1000, predictedTokens: 60, predictedMs: 1000 });
    expect(l.speeds("A").promptTps).toBeCloseTo(4000, -1);
    expect(l.speeds("A").genTps).toBeCloseTo(60, 0);
    expect(l.speeds("A").completionTokens).toBeCloseTo(60, 0);
    expect(l.speeds("B")).toEqual(DEFAULT_SPEEDS);
  });
  it("absorbs other isolates' placements unless it knows newer", () => {
    const l = new ServerLedger();
    const prefixes = turn(2);
    l.absorb("A", "k", [prefixes[0]!, prefixes.at(-1)!], 100);
    expect(l.homeOf("k", 200)).toBe("A");
    expect(l.heldChars("A", turn(3), 200)).toBe(prefixes.at(-1)!.chars);
    l.begin("B", "k", 100, 300)();
    l.absorb("A", "k", prefixes, 250); // older than this isolate's own placement on B
    expect(l.homeOf("k", 400)).toBe("B");
    l.absorb("A", "k", prefixes, 500);
    expect(l.homeOf("k", 600)).toBe("A");
  });
  it("forgets what a restarted server held and hosted before its restart, keeps what came after, and its speeds", () => {
    const l = new ServerLedger();
    l.learn("A", { chars: 1000, promptTokens: 250 });
    l.served("A", turn(2), 100);
    l.begin("A", "old", 100, 100)();
    l.begin("A", "other", 100, 150)();
    l.begin("A", "fresh", 100, 400)();
    l.served("A", promptPrefixes([{ role: "user", content: "fresh" }]), 400);
    l.restarted("A", 300);
    expect(l.heldChars("A", turn(3), 500)).toBe(0);
    expect(l.homeOf("old", 500)).toBeUndefined();
    expect(l.conversationCount("A", 500)).toBe(1);
    expect(l.homeOf("fresh", 500)).toBe("A");
    expect(l.heldChars("A", promptPrefixes([{ role: "user", content: "fresh" }]), 500)).toBeGreaterThan(0);
    expect(l.speeds("A").tokensPerChar).toBe(0.25);
    // A note from another isolate about a placement before the restart is old news.
    l.absorb("A", "late", turn(2), 200);
    expect(l.homeOf("late", 500)).toBeUndefined();
    expect(l.heldChars("A", turn(3), 500)).toBe(0);
    // Each snapshot repeats the restart: nothing more is forgotten.
    l.restarted("A", 300);
    expect(l.conversationCount("A", 500)).toBe(1);
    // Another restart later forgets the rest.
    l.restarted("A", 450);
    expect(l.conversationCount("A", 500)).toBe(0);
  });
});
