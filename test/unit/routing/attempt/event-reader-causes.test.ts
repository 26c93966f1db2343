import { describe, expect, it } from "vitest";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { classifyFailure, countsAgainstUpstream, retriesSameTarget } from "../../../../src/health/classify-failure.ts";
import { EventReader, type EndObserver } from "../../../../src/routing/attempt/event-reader.ts";
import { Deadlines } from "../../../../src/lib/deadlines.ts";
import type { EventStreamReader } from "../../../../src/events/event-source.ts";
import type { UpstreamEvent } from "../../../../src/events/events.ts";

// Who ended an attempt's events is told apart where it is known (issue 26, finding 6): the request's
// own total deadline over an answer that kept coming, an upstream that stalled, the client leaving.
// Only the stall is the upstream's doing and counts against its health.

/** An upstream that sends a text event every `everyMs` until cancelled, or stalls after `stallAfter` events. */
function upstream(everyMs: number, opts: { stallAfter?: number; signal?: AbortSignal } = {}): EventStreamReader {
  let sent = 0;
  let cancelled = false;
  let wake: ((r: ReadableStreamReadResult<UpstreamEvent>) => void) | undefined;
  let fail: ((e: unknown) => void) | undefined;
  // Like a fetch body: the client's abort breaks a pending read with an AbortError.
  opts.signal?.addEventListener("abort", () => fail?.(new DOMException("The operation was aborted.", "AbortError")));
  return {
    read() {
      if (cancelled) return Promise.resolve({ done: true, value: undefined });
      return new Promise((resolve, reject) => {
        wake = resolve;
        fail = reject;
        if (opts.stallAfter !== undefined && sent >= opts.stallAfter) return;
        setTimeout(() => resolve({ done: false, value: { type: "text", delta: `t${sent++} ` } }), everyMs);
      });
    },
    async cancel() {
      cancelled = true;
      wake?.({ done: true, value: undefined });
    },
  };
}

async function readUntilError(r: EventReader): Promise<ProxyError> {
  for (;;) {
    try {
      if ((await r.next()) === null) throw new Error("the events ended without an error");
    } catch (e) {
      if (e instanceof ProxyError) return e;
      throw e;
    }
  }
}

function ends(r: EventReader): Array<Parameters<EndObserver["end"]>[0]> {
  const seen: Array<Parameters<EndObserver["end"]>[0]> = [];
  r.observer = { end: (how) => seen.push(how) };
  return seen;
}

describe("EventReader: what ended the attempt", () => {
  it("the request's own totalMs over an answer that kept coming: a timeout that is not the upstream's (no health signal, not retried there)", async () => {
    const r = new EventReader(upstream(20), "up", { firstTokenMs: 1000, idleMs: 1000, totalMs: 200 }, Date.now(), new Deadlines());
    const seen = ends(r);
    const err = await readUntilError(r);
    expect(err.code).toBe("upstream_timeout");
    expect(err.message).toContain("timeouts.totalMs (200 ms)");
    expect(seen).toHaveLength(1);
    const kind = classifyFailure(err);
    expect(kind).toBe("deadline");
    expect(countsAgainstUpstream(kind)).toBe(false);
    expect(retriesSameTarget(kind)).toBe(false);
  });

  it("an upstream that stops sending (idleMs) is the upstream's: it counts", async () => {
    const r = new EventReader(upstream(10, { stallAfter: 2 }), "up", { firstTokenMs: 1000, idleMs: 100, totalMs: 5000 }, Date.now(), new Deadlines());
    const err = await readUntilError(r);
    expect(err.message).toContain("timeouts.idleMs (100 ms)");
    expect(classifyFailure(err)).toBe("timeout");
    expect(countsAgainstUpstream(classifyFailure(err))).toBe(true);
  });

  it("an upstream that never begins (firstTokenMs) is the upstream's: it counts", async () => {
    const r = new EventReader(upstream(10, { stallAfter: 0 }), "up", { firstTokenMs: 100, idleMs: 1000, totalMs: 5000 }, Date.now(), new Deadlines());
    const err = await readUntilError(r);
    expect(err.message).toContain("timeouts.firstTokenMs (100 ms)");
    expect(classifyFailure(err)).toBe("timeout");
  });

  it("the client leaving mid-answer breaks the read: ended as cancelled, a 499, never a broken upstream", async () => {
    const client = new AbortController();
    const r = new EventReader(upstream(20, { signal: client.signal }), "up", { firstTokenMs: 1000, idleMs: 1000, totalMs: 5000 }, Date.now(), new Deadlines(), client.signal);
    const seen = ends(r);
    expect(await r.next()).toMatchObject({ type: "text" });
    setTimeout(() => client.abort(), 5);
    const err = await readUntilError(r);
    expect(err.status).toBe(499);
    expect(classifyFailure(err)).toBe("gone");
    expect(seen).toEqual([{ cancelled: true }]);
  });

  it("without the client's signal the same broken read is the upstream's 502 (as a connection lost mid-answer is)", async () => {
    const client = new AbortController();
    const r = new EventReader(upstream(20, { signal: client.signal }), "up", { firstTokenMs: 1000, idleMs: 1000, totalMs: 5000 }, Date.now(), new Deadlines());
    const seen = ends(r);
    await r.next();
    setTimeout(() => client.abort(), 5);
    const err = await readUntilError(r);
    expect(err.status).toBe(502);
    expect(classifyFailure(err)).toBe("broken");
    expect(seen).toMatchObject([{ ok: false, broken: true }]);
  });
});
