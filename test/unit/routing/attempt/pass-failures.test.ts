// What a pass over the targets learned of them: the attempts it made, each target's last failure,
// and the error it ends with (carrying the attempts and every target's outcome, and what the
// request's outcome is reported under and what is worth waiting for).
import { describe, expect, it } from "vitest";
import type { HealthRecorder } from "../../../../src/health/health-client.ts";
import { EMPTY_SNAPSHOT, type HealthSnapshot } from "../../../../src/health/upstream-health.ts";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { PassFailures, type Tries } from "../../../../src/routing/attempt/pass-failures.ts";
import type { Target } from "../../../../src/routing/target.ts";

const A: Target = { kind: "llama", url: "http://10.0.2.1:8080", name: "A" };
const B: Target = { kind: "llama", url: "http://10.0.2.2:8080", name: "B" };
const health = { snapshot: () => EMPTY_SNAPSHOT } as unknown as HealthRecorder;

const tries = (attempts = 0): Tries => ({ attempts, finishTarget: "none", wait: null });
const unreachable = () => new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: "refused" });
const busy = () => new ProxyError({ status: 503, code: "no_capacity", retryable: true, busy: true, retryAfter: 1, message: "full" });
const refused = () => new ProxyError({ status: 400, code: "invalid_request_error", message: "bad" });

describe("a pass's failures", () => {
  it("counts attempts across passes, this pass's apart; an attempt that turns out to skip its target is undone", () => {
    const t = tries(3);
    const pass = new PassFailures(t, undefined, Date.now(), health, 5000);
    pass.begin(A);
    const undo = pass.begin(B);
    expect([pass.attempts, pass.made]).toEqual([5, 2]);
    undo();
    expect([pass.attempts, pass.made]).toEqual([4, 1]);
    // The request's outcome goes under the last target attempted, B's undone.
    pass.failed(B, unreachable(), { skipped: true });
    const err = pass.final();
    expect(t).toMatchObject({ attempts: 4, finishTarget: "A" });
    expect(err.attempts).toBe(4);
  });

  it("ends with the failure that ranks first, whatever the order tried, carrying every target's outcome", () => {
    const t = tries();
    const pass = new PassFailures(t, undefined, Date.now(), health, 5000);
    pass.begin(A);
    pass.failed(A, unreachable(), { kind: "unreachable" });
    pass.begin(B);
    const full = busy();
    pass.failed(B, full, { kind: "busy" });
    const err = pass.final();
    expect(err).toBe(full);
    expect(err.outcomes).toEqual([
      { target: "A", code: "upstream_unreachable", status: 502 },
      { target: "B", code: "no_capacity", status: 503 },
    ]);
    expect(t).toMatchObject({ attempts: 2, finishTarget: "B", wait: "capacity" });
  });

  it("a client mistake ends it at once, answered from that target, worth no wait", () => {
    const t = tries();
    const pass = new PassFailures(t, undefined, Date.now(), health, 5000);
    pass.begin(A);
    pass.failed(A, busy());
    pass.begin(B);
    const bad = refused();
    pass.failed(B, bad, { kind: "client" });
    expect(pass.end(bad, B)).toBe(bad);
    expect(t).toMatchObject({ finishTarget: "B", wait: null });
  });

  it("nothing tried and nothing failed: 503 no_capacity", () => {
    const err = new PassFailures(tries(), undefined, Date.now(), health, 5000).final();
    expect(err).toMatchObject({ status: 503, code: "no_capacity", retryAfter: 5, attempts: 0, outcomes: [] });
  });

  it("a target whose circuit was open when the pass was ordered loses to a live one of the same class", () => {
    const now = Date.now();
    const snapshot: HealthSnapshot = { at: now, upstreams: { "http://10.0.2.1:8080": { state: "down", circuit: { state: "open", failures: 3, until: now + 60_000, cooldownMs: 60_000 }, checkedAt: now } } };
    const pass = new PassFailures(tries(), snapshot, now, health, 5000);
    pass.begin(A);
    const first = unreachable();
    pass.failed(A, first, { kind: "unreachable" });
    pass.begin(B);
    const second = unreachable();
    pass.failed(B, second, { kind: "unreachable" });
    expect(pass.final()).toBe(second);
  });
});
