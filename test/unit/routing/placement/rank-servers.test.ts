import { describe, expect, it } from "vitest";
import { conversationKey } from "../../../../src/routing/placement/conversation-key.ts";
import { promptPrefixes } from "../../../../src/routing/placement/prompt-prefixes.ts";
import { rankServers, type PlacementRequest, type ServerChoice } from "../../../../src/routing/placement/rank-servers.ts";
import { ServerLedger } from "../../../../src/routing/placement/server-ledger.ts";

const SYSTEM = { role: "system", content: "You are a coding agent. ".repeat(200) };
const conversation = (i: number, turns: number, bytes = 200) => {
  const m: Array<{ role: string; content: string }> = [SYSTEM, { role: "user", content: `task ${i} ` + "x".repeat(bytes) }];
  for (let t = 1; t < turns; t++) m.push({ role: "assistant", content: `done ${t}` }, { role: "user", content: `result ${t} ` + "y".repeat(bytes) });
  return m;
};
const request = (messages: unknown[], maxTokens = 32): PlacementRequest => ({ key: conversationKey(messages), prefixes: promptPrefixes(messages), maxTokens });
const servers = (slots = 2, busy: Record<string, number> = {}): ServerChoice[] =>
  ["A", "B"].map((id, i) => ({ id, weight: 1, load: { slots, sampledBusy: busy[id] ?? 0, sampledAt: 0 }, tieBreak: i }));

/** Places a request and, unless `hold`, serves it at once; returns the chosen server. */
function place(l: ServerLedger, req: PlacementRequest, now: number, choices = servers(), hold = false): string {
  const id = rankServers(choices, req, l, now)[0]!.id;
  const end = l.begin(id, req.key, 500, now);
  l.served(id, req.prefixes, now);
  if (!hold) end();
  return id;
}

describe("rankServers: new conversations spread", () => {
  it("one at a time (idle servers, a shared system prompt cached on one): 4/4", () => {
    const l = new ServerLedger();
    const where = Array.from({ length: 8 }, (_, i) => place(l, request(conversation(i, 1)), i * 1000));
    expect(where.filter((s) => s === "A")).toHaveLength(4);
  });
  it("all at once (none has answered yet): 4/4, and no server gets more than its slots before the other is full", () => {
    const l = new ServerLedger();
    const where = Array.from({ length: 8 }, (_, i) => place(l, request(conversation(i, 1)), 0, servers(), true));
    expect(where.filter((s) => s === "A")).toHaveLength(4);
    expect(where.slice(0, 4).filter((s) => s === "A")).toHaveLength(2);
  });
  it("per weight: 3 to 1", () => {
    const l = new ServerLedger();
    const choices = servers().map((c) => (c.id === "A" ? { ...c, weight: 3 } : c));
    const where = Array.from({ length: 8 }, (_, i) => place(l, request(conversation(i, 1)), i * 1000, choices));
    expect(where.filter((s) => s === "A")).toHaveLength(6);
  });
  it("not onto a server with a queue when another has a free slot", () => {
    const l = new ServerLedger();
    place(l, request(conversation(0, 1)), 0); // A has one conversation, B none
    expect(rankServers(servers(2, { B: 3 }), request(conversation(1, 1)), l, 10)[0]!.id).toBe("A");
  });
});

describe("rankServers: a conversation stays with its cache", () => {
  it("later turns go home while home has a free slot", () => {
    const l = new ServerLedger();
    const home = place(l, request(conversation(0, 1)), 0);
    for (let t = 2; t <= 6; t++) expect(place(l, request(conversation(0, t)), t * 1000)).toBe(home);
  });
  it("home's slots busy: it waits there when the wait is shorter than recomputing its prefix elsewhere", () => {
    const l = new ServerLedger();
    // A turn of about 10,000 tokens (at the default 0.3 tokens a char), 6,000 of them cached at home; 1,000 tokens/s.
    const big = (t: number) => conversation(0, t, 15_000);
    const home = place(l, request(big(1)), 0);
    const other = home === "A" ? "B" : "A";
    // Two requests hold home's slots, one finishing in 1 s: recomputing ~10 s elsewhere does not pay.
    l.begin(home, null, 2000, 0);
    l.begin(home, null, 1000, 0);
    const now = 100;
    const ranked = rankServers(servers(2, { [home]: 2 }), request(big(2)), l, now);
    expect(ranked[0]!.id).toBe(home);
    expect(ranked[0]!.home).toBe(true);
    expect(ranked[1]!.id).toBe(other);
    expect(ranked[1]!.uncachedTokens).toBeGreaterThan(ranked[0]!.uncachedTokens + 5000);
  });
  it("the wait bound: with the other server free, a turn waits at home only while the wait is shorter than recomputing its uncached prompt there (conversations of its own or not)", () => {
    const l = new ServerLedger();
    const mine = request(conversation(0, 1, 600));
    const home = place(l, mine, 0);
    const other = home === "A" ? "B" : "A";
    l.begin(other, request(conversation(1, 1, 600)).key, 500, 0)(); // the other server hosts a conversation, idle now
    const next = request(conversation(0, 2, 600));
    // Its uncached prompt there at the default 1,000 tokens/s: about 1.6 s.
    const recomputeMs = (rankServers(servers(2), next, l, 10).find((e) => e.id === other)!.uncachedTokens / 1000) * 1000;
    expect(recomputeMs).toBeGreaterThan(1000);
    let inFlight = 0;
    const firsts: string[] = [];
    for (const n of [4, 8, 12, 16, 28]) {
      for (; inFlight < n; inFlight++) l.begin(home, null, 500, 0);
      const ranked = rankServers(servers(2, { [home]: n }), next, l, 10);
      const atHome = ranked.find((e) => e.id === home)!;
      // The generation is the same on both: the wait (and home's own small prefill) against the recomputation.
      const homeMs = atHome.waitMs + (atHome.uncachedTokens / 1000) * 1000;
      expect(ranked[0]!.id).toBe(homeMs <= recomputeMs ? home : other);
      firsts.push(ranked[0]!.id === home ? "home" : "other");
    }
    // Four in flight (2 slots, 0.5 s each: ~1 s of wait) stay home; eight (~1.8 s, over the ~1.6 s recomputation) and more move.
    expect(firsts).toEqual(["home", "other", "other", "other", "other"]);
  });
  it("home kept over a move carries how long a slot there is worth waiting for: the move's cost less home's service, and no more", () => {
    const l = new ServerLedger();
    const home = place(l, request(conversation(0, 1, 600)), 0);
    const other = home === "A" ? "B" : "A";
    const next = request(conversation(0, 2, 600));
    for (let i = 0; i < 4; i++) l.begin(home, null, 500, 0); // ~1 s of wait at home, the other server idle
    const ranked = rankServers(servers(2, { [home]: 4 }), next, l, 10);
    const [atHome, elsewhere] = ranked;
    expect(atHome!.id).toBe(home);
    // Moving costs the other's finish (it has a slot free); staying, home's wait and its service.
    const homeService = atHome!.finishMs - atHome!.waitMs;
    expect(atHome!.holdMs).toBeCloseTo(elsewhere!.finishMs - homeService, 6);
    expect(atHome!.holdMs!).toBeGreaterThanOrEqual(atHome!.waitMs);
    expect(elsewhere!.id).toBe(other);
    expect(elsewhere!.holdMs).toBeUndefined();
    // Moved, or with no home, there is nothing to hold for.
    for (let i = 0; i < 8; i++) l.begin(home, null, 500, 0);
    const moved = rankServers(servers(2, { [home]: 12 }), next, l, 10);
    expect(moved[0]!.id).toBe(other);
    expect(moved.every((e) => e.holdMs === undefined)).toBe(true);
    expect(rankServers(servers(2), request(conversation(5, 1, 600)), l, 10).every((e) => e.holdMs === undefined)).toBe(true);
  });
  it("with the other server busy too, a burst that crowds home is waited out when the other has conversations of its own", () => {
    const l = new ServerLedger();
    const home = place(l, request(conversation(0, 1, 600)), 0);
    const other = home === "A" ? "B" : "A";
    const otherKey = request(conversation(1, 1, 600)).key;
    l.begin(other, otherKey, 500, 0);
    l.begin(other, otherKey, 500, 0); // both its slots busy for ~0.5 s
    for (let i = 0; i < 8; i++) l.begin(home, null, 500, 0); // ~1.5 s of queue at home
    expect(rankServers(servers(2, { [home]: 8, [other]: 2 }), request(conversation(0, 2, 600)), l, 10)[0]!.id).toBe(home);
  });
  it("…and moves when the wait at home is longer than recomputing elsewhere", () => {
    const l = new ServerLedger();
    const req1 = request(conversation(0, 1, 600));
    const home = place(l, req1, 0);
    for (let i = 0; i < 6; i++) l.begin(home, null, 30_000, 0); // a long queue at home
    const ranked = rankServers(servers(2, { [home]: 6 }), request(conversation(0, 2, 600)), l, 10);
    expect(ranked[0]!.id).not.toBe(home);
    expect(ranked[1]!.home).toBe(true);
  });
  it("a sample taken while its previous turn ran is not a queue: one at a time, the conversation stays home", () => {
    const l = new ServerLedger();
    const req1 = request(conversation(0, 1, 600));
    const home = rankServers(servers(), req1, l, 0)[0]!.id;
    const end = l.begin(home, req1.key, 400, 0);
    l.served(home, req1.prefixes, 100);
    end(true, 400);
    // The /slots sample at 300 saw home's slot busy (that was this turn); the next turn comes at 900.
    const stale = servers().map((c) => (c.id === home ? { ...c, load: { slots: 1, sampledBusy: 1, sampledAt: 300 } } : { ...c, load: { slots: 1, sampledBusy: 0, sampledAt: 300 } }));
    const ranked = rankServers(stale, request(conversation(0, 2, 600)), l, 900);
    expect(ranked[0]).toMatchObject({ id: home, waitMs: 0, home: true });
    // A busy slot nobody here placed is a queue (a sample gathered well after this turn ended).
    const busy = stale.map((c) => (c.id === home ? { ...c, load: { slots: 1, sampledBusy: 1, sampledAt: 1500 } } : c));
    expect(rankServers(busy, request(conversation(0, 2, 600)), l, 1600).find((e) => e.id === home)!.waitMs).toBeGreaterThan(0);
  });
  it("knows nothing of the conversation: balance, then the rendezvous tie-break", () => {
    const l = new ServerLedger();
    const ranked = rankServers(servers(), request(conversation(3, 4)), l, 0);
    expect(ranked.map((e) => e.id)).toEqual(["B", "A"]); // equal in all else: the higher tieBreak
    expect(ranked.every((e) => !e.home)).toBe(true);
  });
});
