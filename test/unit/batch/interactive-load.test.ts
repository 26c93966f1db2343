import { describe, expect, it } from "vitest";
import { interactiveWaiting, waitingSources } from "../../../src/batch/interactive-load.ts";
import { parseConfig } from "../../../src/config/config.ts";
import { KEY_PRIORITY_MAX } from "../../../src/auth/key-record.ts";
import { FairQueue } from "../../../src/routing/admission/fair-queue.ts";
import { INTERACTIVE_RECENT_MS } from "../../../src/routing/admission/interactive-recency.ts";
import type { Ask } from "../../../src/routing/admission/hub-wire.ts";
import { PoolGrants } from "../../../src/routing/admission/pool-grants.ts";
import { admissionLevel, BATCH_TOP_LEVEL } from "../../../src/routing/admission/service-class.ts";

// The batch runner's check before it starts a line (src/batch/interactive-load.ts): the pool's
// AdmissionHub's count of every isolate's interactive waiters when admission is shared, the
// isolate's own line otherwise or when the hub fails; and what the hub counts and keeps free.

const local = (n: number) => () => n;

describe("the runner's decision: the shared line first, the isolate's line as the fallback", () => {
  it("the hub's count when it answers, whatever the isolate's own line holds", async () => {
    expect(await interactiveWaiting({ hub: async () => 2, local: local(0) }, 1000)).toEqual({ waiting: 2, from: "hub" });
    // Nobody waits at the hub: a waiter of this isolate only (already counted there when shared) does not hold the batch.
    expect(await interactiveWaiting({ hub: async () => 0, local: local(3) }, 1000)).toEqual({ waiting: 0, from: "hub" });
  });

  it("the isolate's line when the model's admission is not shared", async () => {
    expect(await interactiveWaiting({ hub: null, local: local(1) }, 1000)).toEqual({ waiting: 1, from: "local" });
    expect(await interactiveWaiting({ hub: null, local: local(0) }, 1000)).toEqual({ waiting: 0, from: "local" });
  });

  it("the isolate's line when the hub fails or answers nonsense", async () => {
    expect(await interactiveWaiting({ hub: async () => { throw new Error("hub gone"); }, local: local(1) }, 1000)).toEqual({ waiting: 1, from: "local" });
    expect(await interactiveWaiting({ hub: async () => Number.NaN, local: local(2) }, 1000)).toEqual({ waiting: 2, from: "local" });
    expect(await interactiveWaiting({ hub: async () => undefined as unknown as number, local: local(0) }, 1000)).toEqual({ waiting: 0, from: "local" });
  });

  it("the isolate's line when the hub does not answer in time: the runner waits the timeout, not the hub", async () => {
    const started = Date.now();
    const never = () => new Promise<number>(() => {});
    expect(await interactiveWaiting({ hub: never, local: local(4) }, 50)).toEqual({ waiting: 4, from: "local" });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("the sources: without the ADMISSION_HUB binding, or with queue.shared off, no hub is asked", () => {
    const parsed = parseConfig({ SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { m: { targets: [{ kind: "llama", url: "http://127.0.0.1:1" }] } } }) });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    expect(waitingSources({} as Env, parsed.config, "m").hub).toBeNull();
    // queue.shared is off under npm start (SWITCHYARD_ENV=dev; docs/configuration.md): the isolate's own line only.
    const env = { ADMISSION_HUB: {} } as unknown as Env;
    expect(waitingSources(env, parsed.config, "m").hub).toBeNull();
    const on = { ...parsed.config, queue: { ...parsed.config.queue, shared: true } };
    expect(waitingSources(env, on, "m").hub).not.toBeNull();
    expect(waitingSources(env, on, "m").local()).toBe(0);
  });
});

describe("what the hub counts and keeps free for batch lines (PoolGrants)", () => {
  const batchLevel = admissionLevel("batch", 0);
  const ask = (id: string, over: Partial<Ask> = {}): Ask => ({ id, model: "m", key: "k", priority: 0, plan: ["s1"], slots: { s1: 2 }, conversation: null, ...over });
  const batch = (id: string, over: Partial<Ask> = {}) => ask(id, { priority: batchLevel, keepFree: 1, ...over });

  it("counts every interactive waiter of a model, and no batch line", () => {
    const g = new PoolGrants();
    expect(g.ask(ask("i1"), 0)).not.toBeNull();
    expect(g.ask(ask("i2"), 0)).not.toBeNull();
    expect(g.ask(batch("b1"), 1)).toBeNull();
    expect(g.interactiveWaiting("m")).toBe(0);
    expect(g.ask(ask("i3", { priority: admissionLevel("flex", -KEY_PRIORITY_MAX) }), 2)).toBeNull();
    expect(g.ask(ask("i4", { priority: admissionLevel("priority", KEY_PRIORITY_MAX) }), 2)).toBeNull();
    expect(g.interactiveWaiting("m")).toBe(2);
    expect(g.interactiveWaiting("other")).toBe(0);
    // The priority request first, then the flex one; the batch line last.
    expect(g.end("i1", 3)).toEqual([{ id: "i4", server: "s1" }]);
    expect(g.interactiveWaiting("m")).toBe(1);
    expect(g.end("i2", 4)).toEqual([{ id: "i3", server: "s1" }]);
    expect(g.interactiveWaiting("m")).toBe(0);
  });

  it("a batch line takes every slot of an idle pool, and leaves keepFree while interactive requests come", () => {
    const g = new PoolGrants();
    expect(g.ask(batch("b1"), 0)).not.toBeNull();
    expect(g.ask(batch("b2"), 0)).not.toBeNull();
    g.end("b1", 10);
    g.end("b2", 10);
    // An interactive request: from now on for INTERACTIVE_RECENT_MS a batch line leaves one slot free.
    expect(g.ask(ask("i1"), 20)).not.toBeNull();
    g.end("i1", 30);
    expect(g.ask(batch("b3"), 40)).not.toBeNull();
    expect(g.ask(batch("b4"), 40)).toBeNull();
    // The kept slot is there for the next interactive request.
    expect(g.ask(ask("i2"), 50)).not.toBeNull();
    g.end("i2", 60);
    g.end("b3", 60);
    // b4 waited: it takes a slot but again leaves one free.
    expect(g.stats().grants).toBe(1);
    g.leave("b4");
    g.end("b4", 61);
    // After the lull, a batch line again takes every slot.
    const later = 60 + INTERACTIVE_RECENT_MS;
    expect(g.ask(batch("b5"), later)).not.toBeNull();
    expect(g.ask(batch("b6"), later)).not.toBeNull();
  });

  it("never keeps every slot of a one-slot server free", () => {
    const g = new PoolGrants();
    expect(g.ask(ask("i1", { slots: { s1: 1 } }), 0)).not.toBeNull();
    g.end("i1", 1);
    expect(g.ask(batch("b1", { slots: { s1: 1 } }), 2)).not.toBeNull();
  });
});

describe("FairQueue.sizeAbove", () => {
  it("counts the waiters above a level, at any key", () => {
    const q = new FairQueue<string>();
    q.push("b", "k1", admissionLevel("batch", 3));
    q.push("f", "k1", admissionLevel("flex", -KEY_PRIORITY_MAX));
    q.push("d1", "k1", 0);
    q.push("d2", "k2", 0);
    expect(q.sizeAbove(BATCH_TOP_LEVEL)).toBe(3);
    expect(q.sizeAbove(-1)).toBe(2);
    q.remove("d1");
    expect(q.sizeAbove(BATCH_TOP_LEVEL)).toBe(2);
    expect(admissionLevel("batch", KEY_PRIORITY_MAX + 1)).toBe(BATCH_TOP_LEVEL);
    expect(admissionLevel("flex", -KEY_PRIORITY_MAX)).toBeGreaterThan(BATCH_TOP_LEVEL);
  });
});
