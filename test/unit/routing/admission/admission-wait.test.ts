// A request's wait in its model's line around its passes: the first turn, the slot gate during a
// pass, and what a failed pass leads to (another turn, a pause, a look again shortly, or the answer).
// Closed ports: nothing is asked; each server has one slot as admission counts it.
import { beforeEach, describe, expect, it } from "vitest";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { EMPTY_SNAPSHOT, upstreamKey } from "../../../../src/health/upstream-health.ts";
import { AdmissionWait, type WaitOptions } from "../../../../src/routing/admission/admission-wait.ts";
import { slotReleased } from "../../../../src/routing/admission/queue-place.ts";
import { resetIsolateState, type IsolateState } from "../../../../src/routing/isolate/isolate-state.ts";
import type { Target } from "../../../../src/routing/target.ts";

const A: Target = { kind: "llama", url: "http://127.0.0.1:9/wait-a", name: "A" };
const C: Target = { kind: "llama", url: "http://127.0.0.1:9/wait-c", name: "C" };
const BROWSER: Target = { kind: "browser", model: "x", name: "browser:x" };
const key = (t: Target) => upstreamKey((t as { url: string }).url);
const snapshot = () => EMPTY_SNAPSHOT;

let n = 0;
let isolate: IsolateState;
const waitingFor = (model: string) => isolate.queue.waiting(model);
const options = (more: Partial<WaitOptions> = {}): WaitOptions => ({ state: isolate, model: `wait-${++n}`, key: null, priority: 0, maxWaitMs: 5000, signal: new AbortController().signal, env: {}, snapshot, defer: () => {}, ...more });
/** One of our requests in flight on `t`: ends it and wakes the line. */
const hold = (t: Target) => {
  const end = isolate.ledger.begin(key(t), null, 1000, Date.now());
  return () => {
    end(true, Date.now());
    slotReleased(isolate.queue, snapshot);
  };
};
const busy = (attempts = 2) => Object.assign(new ProxyError({ status: 503, code: "no_capacity", retryable: true, busy: true, message: "full" }), { attempts, outcomes: [{ target: "A", code: "no_capacity", status: 503 }] });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a request's admission wait", () => {
  beforeEach(() => void (isolate = resetIsolateState()));

  it("goes at once while a slot is free; a llama-server holding as many of our requests as it has slots refuses for capacity, unasked; a browser target is not gated", () => {
    const first = new AdmissionWait([A, BROWSER], options());
    expect(first.turn()).toBeNull();
    // The slot held for it on A is its own.
    expect(first.refuses(A)).toBeUndefined();
    const end = hold(A);
    first.passEnded();
    const second = new AdmissionWait([A, BROWSER], options());
    // A is full, a browser session's capacity is unknown: only trying tells, so it goes.
    expect(second.turn()).toBeNull();
    expect(second.refuses(A)).toMatchObject({ status: 503, code: "no_capacity", busy: true, retryAfter: 1, message: "A has every slot busy." });
    expect(second.refuses(BROWSER)).toBeUndefined();
    second.passEnded();
    end();
  });

  it("a full plan waits in line for its first turn, given when one of our requests there ends", async () => {
    const end = hold(A);
    const opts = options();
    const wait = new AdmissionWait([A], opts);
    const turn = wait.turn();
    expect(turn).toBeInstanceOf(Promise);
    expect(waitingFor(opts.model)).toBe(1);
    end();
    await turn;
    expect(waitingFor(opts.model)).toBe(0);
    expect(wait.refuses(A)).toBeUndefined();
    wait.passEnded();
  });

  it("a server the prompt does not fit leaves the plan: its slot freeing gives no turn, the other's does", async () => {
    const endA = hold(A);
    const endC = hold(C);
    const opts = options();
    const wait = new AdmissionWait([A, C], opts);
    const turn = wait.turn();
    wait.exclude(C);
    endC();
    expect(waitingFor(opts.model)).toBe(1);
    endA();
    await turn;
    expect(waitingFor(opts.model)).toBe(0);
    wait.passEnded();
  });

  it("after a pass that found a target full: another turn, at once while a slot is free; a second at once in a row pauses a moment, so it does not spin", () => {
    const wait = new AdmissionWait([A], options());
    expect(wait.turn()).toBeNull();
    wait.passEnded();
    expect(wait.afterPass(busy(), "capacity")).toBeNull();
    expect(wait.turn()).toBeNull();
    wait.passEnded();
    const pause = wait.afterPass(busy(), "capacity");
    expect(pause).toBeGreaterThanOrEqual(250);
    expect(pause).toBeLessThanOrEqual(250 * (4 / 3));
    expect(wait.turn()).toBeNull();
    wait.passEnded();
  });

  it("past queue.maxWaitMs, the line's 503 is the answer, with the pass's attempts and outcomes", async () => {
    const wait = new AdmissionWait([A], options({ maxWaitMs: 20 }));
    expect(wait.turn()).toBeNull();
    wait.passEnded();
    await sleep(30);
    const err = busy(3);
    const answer = wait.afterPass(err, "capacity");
    expect(answer).toBeInstanceOf(ProxyError);
    expect(answer).not.toBe(err);
    expect(answer).toMatchObject({ status: 503, code: "no_capacity", attempts: 3, outcomes: err.outcomes });
    expect((answer as ProxyError).message).toContain("stayed at capacity");
  });

  it("every server down and one coming back: looks again shortly while the wait lasts, then the pass's failure is the answer", async () => {
    const down = new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: "refused" });
    const wait = new AdmissionWait([A], options());
    expect(wait.turn()).toBeNull();
    wait.passEnded();
    const pause = wait.afterPass(down, "comeback");
    expect(pause).toBeGreaterThanOrEqual(250);
    expect(pause).toBeLessThanOrEqual(250 * (4 / 3));
    const late = new AdmissionWait([A], options({ maxWaitMs: 5 }));
    expect(late.turn()).toBeNull();
    late.passEnded();
    await sleep(10);
    expect(late.afterPass(down, "comeback")).toBe(down);
  });
});
