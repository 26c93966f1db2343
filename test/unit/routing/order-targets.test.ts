import { describe, expect, it } from "vitest";
import { CLOSED, type Circuit } from "../../../src/health/circuit-breaker.ts";
import { conversationKey } from "../../../src/routing/conversation-key.ts";
import { orderTargets, rendezvous } from "../../../src/routing/order-targets.ts";
import type { Target } from "../../../src/routing/target.ts";
import type { HealthSnapshot, UpstreamHealth } from "../../../src/health/upstream-health.ts";

const llama = (n: number, weight?: number): Target => ({ kind: "llama", url: `http://gpu-${n}:8080`, name: `llama:gpu-${n}:8080`, ...(weight ? { weight } : {}) });
const browser: Target = { kind: "browser", model: "web", name: "browser:web" };
const OPEN: Circuit = { state: "open", failures: 5, until: 10_000, cooldownMs: 10_000 };
const h = (over: Partial<UpstreamHealth> = {}): UpstreamHealth => ({ state: "ready", circuit: CLOSED, checkedAt: 0, ...over });
const snap = (ups: Record<number, Partial<UpstreamHealth>>): HealthSnapshot => ({ at: 0, upstreams: Object.fromEntries(Object.entries(ups).map(([n, u]) => [`http://gpu-${n}:8080`, h(u)])) });
const names = (ts: Target[]) => ts.map((t) => t.name.replace("llama:", "").replace(":8080", ""));

describe("orderTargets: ordered", () => {
  it("keeps the configured order without health", () => {
    expect(names(orderTargets([llama(1), llama(2), browser], { balance: "ordered", snapshot: snap({}), now: 0, key: null }))).toEqual(["gpu-1", "gpu-2", "browser:web"]);
  });
  it("moves an open circuit last but keeps it (a lone upstream is still tried)", () => {
    const s = snap({ 1: { circuit: OPEN } });
    expect(names(orderTargets([llama(1), llama(2), browser], { balance: "ordered", snapshot: s, now: 0, key: null }))).toEqual(["gpu-2", "browser:web", "gpu-1"]);
    expect(names(orderTargets([llama(1)], { balance: "ordered", snapshot: s, now: 0, key: null }))).toEqual(["gpu-1"]);
  });
  it("a half-open circuit comes after healthy ones but before open ones", () => {
    const s = snap({ 1: { circuit: { ...OPEN, until: 0 } }, 2: { circuit: OPEN } });
    expect(names(orderTargets([llama(1), llama(2), llama(3)], { balance: "ordered", snapshot: s, now: 1, key: null }))).toEqual(["gpu-3", "gpu-1", "gpu-2"]);
  });
});

describe("orderTargets: least-busy", () => {
  const opts = (snapshot: HealthSnapshot, key: string | null = null) => ({ balance: "least-busy" as const, snapshot, now: 0, key });
  it("least busy share of slots first; browser sessions after every healthy llama-server", () => {
    const s = snap({ 1: { slotsTotal: 4, slotsBusy: 3 }, 2: { slotsTotal: 4, slotsBusy: 1 }, 3: { slotsTotal: 2, slotsBusy: 1 } });
    expect(names(orderTargets([browser, llama(1), llama(2), llama(3)], opts(s)))).toEqual(["gpu-2", "gpu-3", "gpu-1", "browser:web"]);
  });
  it("weights scale the load", () => {
    const s = snap({ 1: { slotsTotal: 4, slotsBusy: 2 }, 2: { slotsTotal: 4, slotsBusy: 1 } });
    expect(names(orderTargets([llama(1, 4), llama(2)], opts(s)))).toEqual(["gpu-1", "gpu-2"]);
  });
  it("warm first: ready before unknown before loading; down after browsers", () => {
    const s = snap({ 1: { state: "loading" }, 2: { state: "down" }, 3: { state: "ready", slotsTotal: 1, slotsBusy: 1 } });
    expect(names(orderTargets([llama(1), llama(2), llama(3), llama(4), browser], opts({ ...s, upstreams: { ...s.upstreams } })))).toEqual(["gpu-3", "gpu-4", "gpu-1", "browser:web", "gpu-2"]);
  });
  it("affinity: every turn of a conversation goes to the same upstream while it has a free slot", () => {
    const targets = [llama(1), llama(2), llama(3)];
    const turn1 = [{ role: "system", content: "be brief" }, { role: "user", content: "hello" }];
    const turn3 = [...turn1, { role: "assistant", content: "hi" }, { role: "user", content: "more" }, { role: "assistant", content: "ok" }, { role: "user", content: "again" }];
    const key = conversationKey(turn1)!;
    expect(conversationKey(turn3)).toBe(key);
    const home = rendezvous(targets as any, key)!;
    const idle = snap({ 1: { slotsTotal: 4, slotsBusy: 0 }, 2: { slotsTotal: 4, slotsBusy: 0 }, 3: { slotsTotal: 4, slotsBusy: 0 } });
    expect(orderTargets(targets, opts(idle, key))[0]).toBe(home);
    const n = Number(home.name.match(/gpu-(\d)/)![1]);
    const homeFull = snap({ 1: { slotsTotal: 4, slotsBusy: 0 }, 2: { slotsTotal: 4, slotsBusy: 0 }, 3: { slotsTotal: 4, slotsBusy: 0 }, [n]: { slotsTotal: 4, slotsBusy: 4 } });
    expect(orderTargets(targets, opts(homeFull, key))[0]).not.toBe(home);
    const homeOpen = snap({ [n]: { circuit: OPEN } });
    expect(orderTargets(targets, opts(homeOpen, key)).at(-1)).toBe(home);
  });
  it("rendezvous spreads conversations by weight", () => {
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
