import { describe, expect, it } from "vitest";
import { ProxyError } from "../../../src/errors/proxy-error.ts";
import { Deadlines } from "../../../src/lib/deadlines.ts";
import { EventReader } from "../../../src/routing/attempt/event-reader.ts";
import { bodyEvents, type BodyParser, type EventPull } from "../../../src/events/event-source.ts";
import type { UpstreamEvent } from "../../../src/events/events.ts";
import { pullThrough, type EventStage } from "../../../src/events/pull-through.ts";

// Events already parsed from a chunk are taken without a promise each (nextNow); the end and every
// wait stay with next(). These tests pin that both ways of reading give the same events, in order.

/** A parser of lines: "error" makes an error event, anything else a text event. */
const lines = (emit: (e: UpstreamEvent) => void): BodyParser => {
  let rest = "";
  const decoder = new TextDecoder();
  const line = (l: string) => {
    if (l === "error") emit({ type: "error", error: { status: 502, type: "upstream_error", code: "upstream_error", message: "bad" } });
    else if (l) emit({ type: "text", delta: l });
  };
  return {
    push(chunk) {
      const parts = (rest + decoder.decode(chunk)).split("\n");
      rest = parts.pop()!;
      parts.forEach(line);
    },
    end() {
      line(rest);
      emit({ type: "finish", reason: "stop" });
    },
  };
};

function body(...chunks: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const chunk of chunks) c.enqueue(enc.encode(chunk));
      c.close();
    },
  });
}

const TIMEOUTS = { firstTokenMs: 60_000, idleMs: 60_000, totalMs: 60_000 };
const text = (delta: string): UpstreamEvent => ({ type: "text", delta });

/** Every event, taking what is already here with nextNow and waiting with next otherwise. */
async function drain(p: EventPull): Promise<{ events: UpstreamEvent[]; now: number }> {
  const events: UpstreamEvent[] = [];
  let now = 0;
  for (;;) {
    const ready = p.nextNow?.();
    if (ready !== undefined) {
      now++;
      events.push(ready);
      continue;
    }
    const e = await p.next();
    if (!e) return { events, now };
    events.push(e);
  }
}

describe("bodyEvents.readNow", () => {
  it("gives the rest of a chunk's events without reading the body, then nothing until the next read", async () => {
    const r = bodyEvents(body("a\nb\nc\n", "d\n"), lines);
    expect(r.readNow!()).toBeUndefined();
    expect(await r.read()).toEqual({ done: false, value: text("a") });
    expect(r.readNow!()).toEqual(text("b"));
    expect(r.readNow!()).toEqual(text("c"));
    expect(r.readNow!()).toBeUndefined();
    expect(await r.read()).toEqual({ done: false, value: text("d") });
    expect(r.readNow!()).toBeUndefined();
    // The parser's end comes through read(), which reports the end after it.
    expect(await r.read()).toEqual({ done: false, value: { type: "finish", reason: "stop" } });
    expect(await r.read()).toEqual({ done: true, value: undefined });
  });

  it("gives nothing after cancel", async () => {
    const r = bodyEvents(body("a\nb\n"), lines);
    await r.read();
    await r.cancel();
    expect(r.readNow!()).toBeUndefined();
    expect(await r.read()).toEqual({ done: true, value: undefined });
  });
});

describe("EventReader.nextNow", () => {
  const reader = (...chunks: string[]) => new EventReader(bodyEvents(body(...chunks), lines), "up", TIMEOUTS, Date.now(), new Deadlines());

  it("reads the same events as next() alone, with the observer told of each and of the end once", async () => {
    const seen: string[] = [];
    const ends: unknown[] = [];
    const r = reader("a\nb\nc\n", "d\ne\n");
    r.observer = { event: (e) => seen.push(e.type === "text" ? e.delta : e.type), end: (how) => ends.push(how) };
    const { events, now } = await drain(r);
    const plain = [];
    const alone = reader("a\nb\nc\n", "d\ne\n");
    for (let e = await alone.next(); e; e = await alone.next()) plain.push(e);
    expect(events).toEqual(plain);
    expect(now).toBe(3);
    expect(seen).toEqual(["a", "b", "c", "d", "e", "finish"]);
    expect(ends).toEqual([{ ok: true }]);
  });

  it("an error event taken now ends the attempt as next() would", async () => {
    const ends: unknown[] = [];
    const r = reader("a\nerror\nb\n");
    r.observer = { end: (how) => ends.push(how) };
    expect(await r.next()).toEqual(text("a"));
    expect(r.nextNow()).toMatchObject({ type: "error" });
    expect(ends).toEqual([{ ok: false, error: expect.any(ProxyError), broken: false }]);
    // Once ended, nothing more is taken now.
    expect(r.nextNow()).toBeUndefined();
  });

  it("takes nothing from a reader that cannot tell (a plain stream reader)", async () => {
    const plain = new ReadableStream<UpstreamEvent>({
      start(c) {
        c.enqueue(text("a"));
        c.enqueue(text("b"));
        c.close();
      },
    }).getReader();
    const r = new EventReader(plain, "up", TIMEOUTS, Date.now(), new Deadlines());
    expect(await r.next()).toEqual(text("a"));
    expect(r.nextNow()).toBeUndefined();
    expect(await r.next()).toEqual(text("b"));
  });
});

describe("pullThrough.nextNow", () => {
  /** A stage that doubles every text event and adds one at the end. */
  const doubling = (): EventStage => ({
    push: (e) => (e.type === "text" ? [e, { type: "text", delta: e.delta.toUpperCase() }] : [e]),
    end: () => [text("end")],
  });
  const reader = (...chunks: string[]) => new EventReader(bodyEvents(body(...chunks), lines), "up", TIMEOUTS, Date.now(), new Deadlines());

  it("runs the first event and what the inner pull has now through the stage, the same events as next() alone", async () => {
    const p = pullThrough(text("x"), reader("a\nb\n", "c\n"), doubling());
    const { events, now } = await drain(p);
    const alone = pullThrough(text("x"), reader("a\nb\n", "c\n"), doubling());
    const plain = [];
    for (let e = await alone.next(); e; e = await alone.next()) plain.push(e);
    expect(events).toEqual(plain);
    expect(events.map((e) => (e.type === "text" ? e.delta : e.type))).toEqual(["x", "X", "a", "A", "b", "B", "c", "C", "finish", "end"]);
    // The first event, its doubling and the second text line's pair came without a wait.
    expect(now).toBeGreaterThanOrEqual(4);
  });

  it("stops at an error taken now: the inner pull is cancelled and no end events follow", async () => {
    let cancels = 0;
    const inner = reader("a\nerror\nb\n");
    const cancel = inner.cancel.bind(inner);
    inner.cancel = () => {
      cancels++;
      cancel();
    };
    const p = pullThrough(text("x"), inner, doubling());
    const { events } = await drain(p);
    expect(events.map((e) => (e.type === "text" ? e.delta : e.type))).toEqual(["x", "X", "a", "A", "error"]);
    expect(cancels).toBe(1);
    expect(p.nextNow!()).toBeUndefined();
    expect(await p.next()).toBeNull();
  });
});
