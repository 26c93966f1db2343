import { describe, expect, it } from "vitest";
import { FAST, arrived, chat, closedAfter, fixture, fixtureLog, llama, sleep, vars } from "./fault-harness.ts";

// A client that leaves at every stage, stream and non-stream: the upstream connection (the fixture's
// view of it) closes within a second, and nothing more is sent upstream afterwards.
const LIMIT_MS = 1000;
const id = (stage: string, stream: boolean) => `leave-${stage}-${stream ? "s" : "n"}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;

describe.each([true, false])("a client that leaves (stream: %s)", (stream) => {
  /** The client aborts once the request has reached the upstream, which stalls at `behaviour`. (A fixed
   *  sleep was not enough: on a loaded machine the request had not left the Worker yet, so the abort
   *  came first and nothing upstream ever opened, let alone closed.) */
  async function leaveDuringStall(stage: string, behaviour: string, timeouts: Record<string, number>) {
    const requestId = id(stage, stream);
    const ac = new AbortController();
    const pending = chat({ stream, requestId, signal: ac.signal, vars: vars([llama(fixture(behaviour))], { timeouts: { ...FAST, ...timeouts } }) });
    expect(await arrived(requestId)).toBe(true);
    await sleep(50);
    const leftAt = Date.now();
    ac.abort();
    const { res } = await pending;
    await res.text().catch(() => "");
    expect(await closedAfter(requestId, leftAt)).toBeLessThan(LIMIT_MS);
  }

  it("while the upstream has sent no headers (before commit)", () => leaveDuringStall("headers", "behave/stall-headers/5000", { responseStartMs: 5000 }));

  it("after headers, before the first token", () => leaveDuringStall("first", "behave/stall-before-first/5000", { firstTokenMs: 5000 }));

  it("after commit, mid-answer (the body reader goes away)", async () => {
    const requestId = id("mid", stream);
    const { res } = await chat({ stream, requestId, vars: vars([llama(fixture("behave/endless"))], { timeouts: { ...FAST, totalMs: 10_000, commitMs: 200 } }) });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    await sleep(300);
    const leftAt = Date.now();
    await reader.cancel();
    expect(await closedAfter(requestId, leftAt)).toBeLessThan(LIMIT_MS);
  });

  it("while waiting out a Retry-After before retrying: no second request goes upstream", async () => {
    const requestId = id("backoff", stream);
    const url = fixture("behave/busy-then-ok/1");
    const ac = new AbortController();
    const pending = chat({ stream, requestId, signal: ac.signal, vars: vars([llama(url)], { timeouts: { ...FAST, commitMs: 3000 } }) });
    await sleep(300);
    ac.abort();
    const { res } = await pending;
    await res.text().catch(() => "");
    await sleep(1200);
    const path = new URL(url).pathname.replace(/^\/u-[^/]+/, "");
    const sent = (await fixtureLog<{ path: string; headers: Record<string, string> }>("_requests")).filter((r) => r.headers["x-client-request-id"] === requestId);
    expect(sent.map((r) => r.path)).toEqual([`${path}/v1/chat/completions`]);
  });
});
