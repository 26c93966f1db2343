import { describe, expect, it } from "vitest";
import { ProxyError } from "../../../src/errors/proxy-error.ts";
import type { UpstreamEvent } from "../../../src/events/events.ts";
import { pullThrough, type EventStage } from "../../../src/events/pull-through.ts";

/** A stage that doubles every text event and adds one at the end. */
const doubling = (): EventStage => ({
  push: (e) => (e.type === "text" ? [e, { type: "text", delta: e.delta.toUpperCase() }] : [e]),
  end: () => [{ type: "text", delta: "end" }],
});

function inner(events: Array<UpstreamEvent | Error>) {
  let i = 0;
  const log = { reads: 0, cancels: 0 };
  return {
    log,
    pull: {
      async next() {
        log.reads++;
        const e = events[i++];
        if (e instanceof Error) throw e;
        return e ?? null;
      },
      cancel() {
        log.cancels++;
      },
    },
  };
}

async function all(p: { next(): Promise<UpstreamEvent | null> }): Promise<UpstreamEvent[]> {
  const out: UpstreamEvent[] = [];
  for (let e = await p.next(); e; e = await p.next()) out.push(e);
  return out;
}

describe("pullThrough", () => {
  it("runs the first event and the rest through the stage, one at a time, then its end", async () => {
    const { pull, log } = inner([{ type: "text", delta: "b" }]);
    const p = pullThrough({ type: "text", delta: "a" }, pull, doubling());
    expect(await p.next()).toEqual({ type: "text", delta: "a" });
    // The second event of the first push is ready: the inner pull is not read for it.
    expect(await p.next()).toEqual({ type: "text", delta: "A" });
    expect(log.reads).toBe(0);
    expect(await all(p)).toEqual([
      { type: "text", delta: "b" },
      { type: "text", delta: "B" },
      { type: "text", delta: "end" },
    ]);
  });

  it("turns a thrown timeout into an error event, cancels the inner pull and reads nothing more", async () => {
    const timeout = new ProxyError({ status: 504, code: "upstream_timeout", message: "stalled" });
    const { pull, log } = inner([{ type: "text", delta: "a" }, timeout, { type: "text", delta: "never" }]);
    const out = await all(pullThrough({ type: "text", delta: "x" }, pull, doubling()));
    expect(out.map((e) => e.type)).toEqual(["text", "text", "text", "text", "error"]);
    expect(out[4]).toMatchObject({ error: { status: 504, code: "upstream_timeout" } });
    expect(log).toEqual({ reads: 2, cancels: 1 });
  });

  it("an in-stream error event ends it the same way (no end events after it)", async () => {
    const error = { type: "error" as const, error: { status: 502, type: "upstream_error", code: "upstream_error", message: "x" } };
    const { pull, log } = inner([error, { type: "text", delta: "never" }]);
    expect(await all(pullThrough({ type: "text", delta: "a" }, pull, doubling()))).toEqual([{ type: "text", delta: "a" }, { type: "text", delta: "A" }, error]);
    expect(log).toEqual({ reads: 1, cancels: 1 });
  });

  it("cancel reaches the inner pull and ends what is ready", async () => {
    const { pull, log } = inner([{ type: "text", delta: "b" }]);
    const p = pullThrough({ type: "text", delta: "a" }, pull, doubling());
    await p.next();
    p.cancel();
    expect(await p.next()).toBeNull();
    expect(log.cancels).toBe(1);
  });
});
