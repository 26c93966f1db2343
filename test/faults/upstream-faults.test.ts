import { afterAll, describe, expect, it } from "vitest";
import { FAST, chat, fixture, fixtureLog, llama, outcome, overruns, recordOverrun, vars, type Outcome } from "./fault-harness.ts";

// Every fault, stream and non-stream, through the whole Worker against the fixture upstream
// (test/support/fixture-upstream.mjs). Timeouts are short (FAST: 300 ms per phase, 1.5 s in all, a
// 1 s commit grace), so "before the first byte" faults keep their HTTP status. Each row states the
// exact outcome; `timeoutMs` is the configured timeout that must end it, checked for overrun.
// The outcomes are the table in docs/reliability.md.

type Expect = Partial<Pick<Outcome, "status" | "code" | "text" | "done" | "attempts">> & { finish?: string[]; textLength?: number };

interface Fault {
  name: string;
  targets: () => unknown[];
  stream: Expect;
  nonStream: Expect;
  timeoutMs?: number;
  /** Worker variables (secrets) for this fault. */
  extra?: Record<string, unknown>;
  /** Timeouts overriding FAST for this fault. */
  timeouts?: Record<string, number>;
  /** Configuration beside the timeouts (the admission queue's wait). */
  config?: Record<string, unknown>;
  /** The answer comes no sooner (it waited in line). */
  minElapsedMs?: number;
}

const say = (text: string) => llama(fixture(`behave/say/${encodeURIComponent(text)}`));
const SLACK_MS = 400;

const FAULTS: Fault[] = [
  {
    name: "refuses connections",
    // Ports of their own (nothing listens on 1 or 2): their circuits are not shared with other tests.
    targets: () => [llama("http://127.0.0.1:1")],
    stream: { status: 502, code: "upstream_unreachable", attempts: "1" },
    nonStream: { status: 502, code: "upstream_unreachable", attempts: "1" },
  },
  {
    name: "resets the connection before answering",
    targets: () => [llama(fixture("behave/reset-before"))],
    stream: { status: 502, code: "upstream_unreachable" },
    nonStream: { status: 502, code: "upstream_unreachable" },
  },
  {
    name: "resets mid-stream",
    targets: () => [llama(fixture("behave/reset-mid"))],
    stream: { status: 200, text: "Par", code: "upstream_error", done: false, finish: [] },
    nonStream: { status: 502, code: "upstream_error" },
  },
  {
    name: "headers never come",
    targets: () => [llama(fixture("behave/stall-headers/5000"))],
    stream: { status: 504, code: "upstream_timeout" },
    nonStream: { status: 504, code: "upstream_timeout" },
    timeoutMs: FAST.responseStartMs,
  },
  {
    name: "stalls after the headers, before the first byte",
    targets: () => [llama(fixture("behave/stall-before-first/5000"))],
    stream: { status: 504, code: "upstream_timeout" },
    nonStream: { status: 504, code: "upstream_timeout" },
    timeoutMs: FAST.firstTokenMs,
  },
  {
    name: "stalls after the first token",
    targets: () => [llama(fixture("behave/stall-after-first/5000"))],
    stream: { status: 200, text: "Hello", code: "upstream_timeout", done: false, finish: [] },
    nonStream: { status: 504, code: "upstream_timeout" },
    timeoutMs: FAST.idleMs,
  },
  {
    name: "a stream that never ends",
    targets: () => [llama(fixture("behave/endless"))],
    // totalMs (1.5 s) is past the commit grace (1 s): the non-stream answer is already a committed 200
    // whose body is the error envelope.
    stream: { status: 200, code: "upstream_timeout", done: false, finish: [] },
    nonStream: { status: 200, code: "upstream_timeout" },
    timeoutMs: FAST.totalMs,
  },
  {
    name: "500 with an HTML page (retried once on the same server, then the error)",
    targets: () => [llama(fixture("behave/html-500"))],
    stream: { status: 502, code: "upstream_error", attempts: "2" },
    nonStream: { status: 502, code: "upstream_error", attempts: "2" },
  },
  {
    // No target ready, one loading its model: it waits in line for it (issue 28), here 600 ms.
    name: "503 while the model loads, past queue.maxWaitMs",
    targets: () => [llama(fixture("behave/loading"))],
    config: { queue: { maxWaitMs: 600 } },
    stream: { status: 503, code: "model_loading" },
    nonStream: { status: 503, code: "model_loading" },
    minElapsedMs: 500,
  },
  {
    name: "503 while the model loads, then loaded within queue.maxWaitMs: served",
    targets: () => [llama(fixture("behave/loading-then-ok/2"))],
    stream: { status: 200, text: "loaded", done: true, attempts: "3", code: null },
    nonStream: { status: 200, text: "loaded", attempts: "3", code: null },
    minElapsedMs: 400,
  },
  {
    name: "401: Switchyard's upstream key is wrong (never retried)",
    targets: () => [llama(fixture("behave/unauthorized"), { apiKeySecret: "FAULT_KEY" })],
    stream: { status: 502, code: "upstream_error", attempts: "1" },
    nonStream: { status: 502, code: "upstream_error", attempts: "1" },
    extra: { FAULT_KEY: "sk-fault-secret-never-shown" },
  },
  {
    name: "404: the target URL is not llama-server",
    targets: () => [llama(fixture("behave/no-such-behaviour"))],
    stream: { status: 502, code: "upstream_error", attempts: "1" },
    nonStream: { status: 502, code: "upstream_error", attempts: "1" },
  },
  {
    name: "garbage frames (retried once, then the error)",
    targets: () => [llama(fixture("behave/garbage"))],
    stream: { status: 502, code: "upstream_error", attempts: "2" },
    nonStream: { status: 502, code: "upstream_error", attempts: "2" },
  },
  {
    name: "a garbage frame after the first token",
    targets: () => [llama(fixture("behave/garbage-after-first"))],
    stream: { status: 200, text: "ok", code: "upstream_error", done: false, finish: [] },
    nonStream: { status: 502, code: "upstream_error" },
  },
  {
    name: "every frame split into single bytes",
    targets: () => [llama(fixture("fixture/stream-plain-text/bytes-1"))],
    // Its subject is the parser, not a timeout: thousands of one-byte writes outlast FAST's 1.5 s
    // on a loaded machine (a 504 upstream_timeout once, two vitest processes beside e2e lanes).
    timeouts: { firstTokenMs: 5000, idleMs: 5000, totalMs: 10_000 },
    stream: { status: 200, text: "Hello from Switchyard!", done: true, finish: ["stop"], code: null },
    nonStream: { status: 200, text: "Hello from Switchyard!", finish: ["stop"], code: null },
  },
  {
    name: "invalid UTF-8 inside a frame (replaced by U+FFFD, never a crash)",
    targets: () => [llama(fixture("behave/invalid-utf8"))],
    stream: { status: 200, text: "A\uFFFD\uFFFDB", done: true, code: null },
    nonStream: { status: 200, text: "A\uFFFD\uFFFDB", code: null },
  },
  {
    name: "a UTF-8 character split across network chunks",
    targets: () => [llama(fixture("behave/split-utf8"))],
    stream: { status: 200, text: "é👋", done: true, code: null },
    nonStream: { status: 200, text: "é👋", code: null },
  },
  {
    name: "a huge frame (2 MiB of content in one event)",
    targets: () => [llama(fixture("behave/huge-frame/2048"))],
    timeouts: { firstTokenMs: 5000 },
    stream: { status: 200, textLength: 2048 * 1024, done: true, code: null },
    nonStream: { status: 200, textLength: 2048 * 1024, code: null },
  },
  {
    name: "a stream that ends without finishing or [DONE]",
    targets: () => [llama(fixture("behave/end-without-done"))],
    stream: { status: 200, text: "Half an answer", code: "upstream_error", done: false, finish: [] },
    nonStream: { status: 502, code: "upstream_error" },
  },
  {
    name: "an in-stream error after tokens (current llama-server, no [DONE])",
    targets: () => [llama(fixture("fixture/stream-midstream-error-no-done"))],
    stream: { status: 200, code: "upstream_error", done: false, finish: [] },
    nonStream: { status: 502, code: "upstream_error" },
  },
  {
    name: "an empty event stream",
    targets: () => [llama(fixture("behave/empty-stream"))],
    stream: { status: 502, code: "upstream_error" },
    nonStream: { status: 502, code: "upstream_error" },
  },
  {
    name: "200 with HTML instead of an event stream",
    targets: () => [llama(fixture("behave/html-200"))],
    stream: { status: 502, code: "upstream_error" },
    nonStream: { status: 502, code: "upstream_error" },
  },
  {
    name: "a client mistake llama-server reports as 500 (never retried, never failed over)",
    targets: () => [llama(fixture("behave/client-mistake-500")), say("never")],
    stream: { status: 400, code: "upstream_error", attempts: "1" },
    nonStream: { status: 400, code: "upstream_error", attempts: "1" },
  },
  {
    name: "an error event before the first token → once more, then the next server",
    targets: () => [llama(fixture("behave/error-frame-first")), say("second server")],
    stream: { status: 200, text: "second server", done: true, attempts: "3", code: null },
    nonStream: { status: 200, text: "second server", attempts: "3", code: null },
  },
  {
    name: "500 once, then fine: retried on the same server",
    targets: () => [llama(fixture("behave/flaky-500/1"))],
    stream: { status: 200, text: "recovered", done: true, attempts: "2", code: null },
    nonStream: { status: 200, text: "recovered", attempts: "2", code: null },
  },
  {
    name: "no free slot with Retry-After: 1 → waits 1 s, same server",
    targets: () => [llama(fixture("behave/busy-then-ok/1"))],
    timeouts: { commitMs: 2500 },
    stream: { status: 200, text: "slot freed", done: true, attempts: "2", code: null },
    nonStream: { status: 200, text: "slot freed", attempts: "2", code: null },
  },
  {
    name: "429 with a long Retry-After → the next server at once",
    targets: () => [llama(fixture("behave/rate-limited/30")), say("other server")],
    stream: { status: 200, text: "other server", done: true, attempts: "2", code: null },
    nonStream: { status: 200, text: "other server", attempts: "2", code: null },
  },
  {
    name: "router mode without the target's model → the next server",
    targets: () => [llama(fixture("behave/router-no-model")), say("has the model")],
    stream: { status: 200, text: "has the model", done: true, attempts: "2", code: null },
    nonStream: { status: 200, text: "has the model", attempts: "2", code: null },
  },
  {
    name: "router: the model being evicted as the request arrived (proxy error 500) → retried on the same server",
    targets: () => [llama(fixture("behave/router-evicting/1"))],
    stream: { status: 200, text: "reloaded", done: true, attempts: "2", code: null },
    nonStream: { status: 200, text: "reloaded", attempts: "2", code: null },
  },
  {
    name: "router: the model fails to load → 502 model_load_failed, 1 attempt, the next server not asked",
    targets: () => [llama(fixture("behave/router-load-failed")), say("never asked")],
    stream: { status: 502, code: "model_load_failed", attempts: "1" },
    nonStream: { status: 502, code: "model_load_failed", attempts: "1" },
  },
  {
    name: "refused, loading, stalled, then a healthy server: failover in order",
    targets: () => [llama("http://127.0.0.1:2"), llama(fixture("behave/loading")), llama(fixture("behave/stall-headers/5000")), say("fourth")],
    stream: { status: 200, text: "fourth", done: true, attempts: "4", code: null },
    nonStream: { status: 200, text: "fourth", attempts: "4", code: null },
  },
  {
    name: "headers late but within responseStartMs (no false timeout)",
    targets: () => [llama(fixture("behave/slow-headers/200"))],
    stream: { status: 200, text: "slow but fine", done: true, code: null },
    nonStream: { status: 200, text: "slow but fine", code: null },
  },
];

describe.each([true, false])("upstream faults (stream: %s)", (stream) => {
  for (const fault of FAULTS) {
    it(fault.name, async () => {
      const { res, started } = await chat({ stream, vars: { ...vars(fault.targets(), { timeouts: { ...FAST, ...fault.timeouts }, ...fault.config }), ...fault.extra } });
      const got = await outcome(res, started);
      const want = stream ? fault.stream : fault.nonStream;
      const { textLength, ...exact } = want;
      expect({ ...got, raw: undefined, elapsed: undefined }).toMatchObject(exact);
      if (textLength !== undefined) expect(got.text.length).toBe(textLength);
      if (got.code) {
        // Errors are the OpenAI envelope (or frame) and never carry upstream secrets.
        expect(got.raw).toContain('"type"');
        expect(got.raw).not.toContain("sk-fault-secret-never-shown");
      }
      if (fault.timeoutMs !== undefined) {
        recordOverrun(`${fault.name} (${stream ? "stream" : "non-stream"})`, fault.timeoutMs, got.elapsed);
        expect(got.elapsed).toBeLessThan(fault.timeoutMs + SLACK_MS);
      }
      if (fault.minElapsedMs !== undefined) expect(got.elapsed).toBeGreaterThanOrEqual(fault.minElapsedMs);
      expect(got.elapsed).toBeLessThan(3000);
    });
  }
});

describe("upstream work stops with the request", () => {
  it("a failed attempt's connection is closed before the next target is tried", async () => {
    const requestId = `fault-stall-failover-${Date.now()}`;
    const { res, started } = await chat({ stream: true, requestId, vars: vars([llama(fixture("behave/stall-headers/5000")), say("next")]) });
    const got = await outcome(res, started);
    expect(got.text).toBe("next");
    const closed = (await fixtureLog<{ requestId: string; at: number }>("_closed")).filter((c) => c.requestId === requestId);
    expect(closed.length).toBeGreaterThanOrEqual(2);
  });
});

afterAll(() => {
  const worst = overruns.reduce((a, b) => (b.overMs > a.overMs ? b : a), { fault: "none", timeoutMs: 0, elapsedMs: 0, overMs: -Infinity });
  console.log(`# faults: longest wait past a configured timeout: ${worst.overMs} ms (${worst.fault}: ${worst.elapsedMs} ms for ${worst.timeoutMs} ms)`);
});
