import { describe, expect, it } from "vitest";
import { CLOSED, type Circuit } from "../../../../src/health/circuit-breaker.ts";
import { conversationKey } from "../../../../src/routing/placement/conversation-key.ts";
import { orderTargets, rendezvous } from "../../../../src/routing/placement/order-targets.ts";
import type { Target } from "../../../../src/routing/target.ts";
import type { HealthSnapshot, UpstreamHealth } from "../../../../src/health/upstream-health.ts";
import { promptPrefixes } from "../../../../src/routing/placement/prompt-prefixes.ts";
import type { PlacementRequest } from "../../../../src/routing/placement/rank-servers.ts";
import { ServerLedger } from "../../../../src/routing/placement/server-ledger.ts";
import { ModelPool } from "../../../../src/routing/placement/model-pool.ts";

const llama = (n: number, weight?: number): Target => ({ kind: "llama", url: `http://gpu-${n}:8080`, name: `llama:gpu-${n}:8080`, ...(weight ? { weight } : {}) });
const browser: Target = { kind: "browser", model: "web", name: "browser:web" };
const OPEN: Circuit = { state: "open", failures: 5, until: 10_000, cooldownMs: 10_000 };
const h = (over: Partial<UpstreamHealth> = {}): UpstreamHealth => ({ state: "ready", circuit: CLOSED, checkedAt: 0, ...over });
const snap = (ups: Record<number, Partial<UpstreamHealth>>): HealthSnapshot => ({ at: 0, upstreams: Object.fromEntries(Object.entries(ups).map(([n, u]) => [`http://gpu-${n}:8080`, h(u)])) });
const names = (ts: Target[]) => ts.map((t) => t.name.replace("llama:", "").replace(":8080", ""));

describe("orderTargets: ordered", () => {
  it("keeps the configured order without health", () => {
    expect(names(orderTargets([llama(1), llama(2), browser], { balance: "ordered", snapshot: snap({}), now: 0, placement: null, ledger: new ServerLedger(), pool: new ModelPool() }))).toEqual(["gpu-1", "gpu-2", "browser:web"]);
  });
  it("moves an open circuit last but keeps it (a lone upstream is still tried)", () => {
    const s = snap({ 1: { circuit: OPEN } });
    expect(names(orderTargets([llama(1), llama(2), browser], { balance: "ordered", snapshot: s, now: 0, placement: null, ledger: new ServerLedger(), pool: new ModelPool() }))).toEqual(["gpu-2", "browser:web", "gpu-1"]);
    expect(names(orderTargets([llama(1)], { balance: "ordered", snapshot: s, now: 0, placement: null, ledger: new ServerLedger(), pool: new ModelPool() }))).toEqual(["gpu-1"]);
  });
  it("a half-open circuit comes after healthy ones but before open ones", () => {
    const s = snap({ 1: { circuit: { ...OPEN, until: 0 } }, 2: { circuit: OPEN } });
    expect(names(orderTargets([llama(1), llama(2), llama(3)], { balance: "ordered", snapshot: s, now: 1, placement: null, ledger: new ServerLedger(), pool: new ModelPool() }))).toEqual(["gpu-3", "gpu-1", "gpu-2"]);
  });
});

describe("orderTargets: least-busy", () => {
  const opts = (snapshot: HealthSnapshot, placement: PlacementRequest | null = null) => ({ balance: "least-busy" as const, snapshot, now: 0, placement, ledger: new ServerLedger(), pool: new ModelPool() });
  const ask = (content: string): PlacementRequest => {
    const messages = [{ role: "user", content }];
    return { key: conversationKey(messages), prefixes: promptPrefixes(messages) };
  };
  it("a new conversation goes to a server with a free slot; browser sessions after every healthy llama-server", () => {
    const s = snap({ 1: { slotsTotal: 2, slotsBusy: 2 }, 2: { slotsTotal: 2, slotsBusy: 1 }, 3: { slotsTotal: 2, slotsBusy: 2 } });
    const order = names(orderTargets([browser, llama(1), llama(2), llama(3)], opts(s, ask("hello"))));
    expect(order[0]).toBe("gpu-2");
    expect(order.at(-1)).toBe("browser:web");
  });
  it("warm first: loading after the warm servers, down after browsers", () => {
    const s = snap({ 1: { state: "loading" }, 2: { state: "down" }, 3: { state: "ready", slotsTotal: 1, slotsBusy: 0 } });
    expect(names(orderTargets([llama(1), llama(2), llama(3), browser], opts(s, ask("hi"))))).toEqual(["gpu-3", "gpu-1", "browser:web", "gpu-2"]);
  });
  it("open and half-open circuits go after browser sessions", () => {
    const s = snap({ 1: { circuit: OPEN }, 2: { circuit: { ...OPEN, until: -1 } } });
    expect(names(orderTargets([llama(1), llama(2), llama(3), browser], opts(s)))).toEqual(["gpu-3", "browser:web", "gpu-2", "gpu-1"]);
  });
  it("every turn of a conversation finds the server its first turn went to", () => {
    const o = opts(snap({ 1: { slotsTotal: 2, slotsBusy: 0 }, 2: { slotsTotal: 2, slotsBusy: 0 } }));
    const targets = [llama(1), llama(2)];
    let messages: Array<{ role: string; content: string }> = [{ role: "system", content: "be brief" }, { role: "user", content: "hello" }];
    const served: string[] = [];
    for (let turn = 0; turn < 4; turn++) {
      const placement = { key: conversationKey(messages), prefixes: promptPrefixes(messages) };
      const first = orderTargets(targets, { ...o, placement })[0]!;
      const id = (first as { url: string }).url;
      o.ledger.begin(id, placement.key, 100, turn * 1000)();
      o.ledger.served(id, placement.prefixes, turn * 1000);
      served.push(first.name);
      messages = [...messages, { role: "assistant", content: `answer ${turn}` }, { role: "user", content: `more ${turn}` }];
    }
    expect(new Set(served).size).toBe(1);
  });
  it("rendezvous spreads keys by weight (the tie-break between equal servers)", () => {
    const targets = [llama(1, 3), llama(2, 1)] as any[];
    const counts: Record<string, number> = {};
    for (let i = 0; i < 4000; i++) {
      const t = rendezvous(targets, conversationKey([{ role: "user", content: `q${i}` }])!)!;
      counts[t.name] = (counts[t.name] ?? 0) + 1;
    }
    const share = counts["llama:gpu-1:8080"]! / 4000;
    expect(share).toBeGreaterThan(0.7);
    expect(share).toBeLessThan(0.8);
  });
});
