import { describe, expect, it } from "vitest";
import { MAX_QUEUE_PER_MODEL, RelayQueue, type Queued } from "../../../../src/upstreams/browser/relay-queue.ts";

const relay = (id: string, sessionId: string, model = "m"): Queued => ({ id, sessionId, model, state: "queued" });

describe("the relay queue: one running request per session and model, a short queue behind it", () => {
  it("starts the oldest waiting request, and nothing while one runs", () => {
    const q = new RelayQueue<Queued>();
    q.add(relay("a", "s1"));
    q.add(relay("b", "s1"));
    expect(q.startNext("s1", "m")?.id).toBe("a");
    expect(q.get("a")?.state).toBe("running");
    expect(q.startNext("s1", "m")).toBeUndefined();
    q.delete("a");
    expect(q.startNext("s1", "m")?.id).toBe("b");
  });

  it("keeps models and sessions apart", () => {
    const q = new RelayQueue<Queued>();
    q.add(relay("a", "s1", "m"));
    q.add(relay("b", "s1", "n"));
    q.add(relay("c", "s2", "m"));
    expect([q.startNext("s1", "m")?.id, q.startNext("s1", "n")?.id, q.startNext("s2", "m")?.id]).toEqual(["a", "b", "c"]);
    expect(q.counts("s1")).toEqual({ running: 2, queued: 0 });
  });

  it("counts what waits, and what a session carries for a model", () => {
    const q = new RelayQueue<Queued>();
    for (const id of ["a", "b", "c"]) q.add(relay(id, "s1"));
    q.startNext("s1", "m");
    expect(q.waiting("s1", "m")).toBe(2);
    expect(q.load("s1", "m")).toBe(3);
    expect(q.counts("s1")).toEqual({ running: 1, queued: 2 });
  });

  it("picks the least loaded session, the first of equals", () => {
    const q = new RelayQueue<Queued>();
    q.add(relay("a", "s1"));
    q.add(relay("b", "s2"));
    q.add(relay("c", "s2"));
    expect(q.leastLoaded(["s2", "s1", "s3"], "m")).toEqual({ sessionId: "s3", load: 0 });
    expect(q.leastLoaded(["s2", "s1"], "m")).toEqual({ sessionId: "s1", load: 1 });
    expect(q.leastLoaded([], "m")).toBeUndefined();
  });

  it("fits one running and MAX_QUEUE_PER_MODEL waiting per session and model", () => {
    expect(RelayQueue.fits(MAX_QUEUE_PER_MODEL)).toBe(true);
    expect(RelayQueue.fits(MAX_QUEUE_PER_MODEL + 1)).toBe(false);
  });

  it("places a conversation where an engine holds it, unless that session would wait more than one answer longer", () => {
    const q = new RelayQueue<Queued>();
    const chain = (...hashes: string[]) => hashes;
    q.add({ ...relay("a", "s1"), prompt: "conv1-t1" });
    q.add({ ...relay("b", "s2"), prompt: "conv2-t1" });
    q.delete("a");
    q.delete("b");
    // Both idle: the first of equals would be s1; conv2's next turn goes back to s2.
    expect(q.place(["s1", "s2"], "m", chain("sys", "conv2-t1", "conv2-t2"))).toEqual({ sessionId: "s2", load: 0, holds: true });
    expect(q.place(["s1", "s2"], "m", chain("sys", "conv3-t1"))).toEqual({ sessionId: "s1", load: 0, holds: false });
    expect(q.place(["s1", "s2"], "m")).toEqual({ sessionId: "s1", load: 0, holds: false });
    // s2 busy with one: still worth waiting there; busy with two while s1 is idle: not.
    q.add(relay("c", "s2"));
    q.add({ ...relay("d", "s2"), prompt: "conv2-t2" });
    q.delete("c");
    expect(q.place(["s1", "s2"], "m", chain("conv2-t2", "conv2-t3"))).toEqual({ sessionId: "s2", load: 1, holds: true });
    q.add(relay("e", "s2"));
    expect(q.place(["s1", "s2"], "m", chain("conv2-t2", "conv2-t3"))?.sessionId).toBe("s1");
    q.delete("d");
    // e was placed there after d: the engine will hold e's prompt, not conversation two's.
    expect(q.place(["s1", "s2"], "m", chain("conv2-t2", "conv2-t3"))).toEqual({ sessionId: "s1", load: 0, holds: false });
    // The same request again is not a held conversation (web-llm compares the messages before the last).
    expect(q.place(["s1", "s2"], "m", chain("conv1-t1"))?.holds).toBe(false);
    // A session that goes away forgets what it held.
    q.add({ ...relay("f", "s1"), prompt: "conv4" });
    q.forget("s1");
    q.delete("f");
    expect(q.place(["s1", "s2"], "m", chain("conv4", "conv4-t2"))?.holds).toBe(false);
  });
});
