// What a pass that failed on every target is worth waiting for (src/routing/attempt/worth-waiting.ts): a
// full server, a loading one, or one restarting (refusing connections, ready moments ago); a server
// gone for good, never ready, or merely slow is answered at once.
import { describe, expect, it } from "vitest";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import type { FailureKind } from "../../../../src/health/classify-failure.ts";
import { CLOSED } from "../../../../src/health/circuit-breaker.ts";
import { upstreamKey, type HealthSnapshot, type UpstreamHealth } from "../../../../src/health/upstream-health.ts";
import type { Target } from "../../../../src/routing/target.ts";
import { RESTARTING_MS, waitFor } from "../../../../src/routing/attempt/worth-waiting.ts";

const now = 1_000_000_000;
let n = 0;
const llama = (): Target & { kind: "llama"; url: string } => ({ kind: "llama", url: `http://10.2.0.${++n}:8080`, name: `llama:10.2.0.${n}:8080` });
const browser: Target = { kind: "browser", model: "Qwen-x", name: "browser:Qwen-x" };

const errors: Record<string, () => ProxyError> = {
  unreachable: () => new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: "refused" }),
  timeout: () => new ProxyError({ status: 504, code: "upstream_timeout", retryable: true, message: "slow" }),
  loading: () => new ProxyError({ status: 503, code: "model_loading", retryable: true, message: "loading" }),
  client: () => new ProxyError({ status: 400, code: "invalid_request_error", message: "bad" }),
  misconfigured: () => new ProxyError({ status: 502, code: "upstream_misconfigured", message: "wrong" }),
  busy: () => new ProxyError({ status: 503, code: "no_capacity", retryable: true, busy: true, message: "full" }),
};

/** The verdict for targets that each failed as `kind`, the snapshot holding `health` per target. */
function verdict(cases: Array<{ target: Target; kind: FailureKind | "busy"; health?: Partial<UpstreamHealth>; retryAfter?: number }>, maxRetryAfterMs?: number) {
  const snapshot: HealthSnapshot = { at: now, upstreams: {} };
  const kinds = new Map<Target, FailureKind>();
  const failed = cases.map(({ target, kind, health, retryAfter }) => {
    if (kind !== "busy") kinds.set(target, kind);
    if (health && "url" in target) snapshot.upstreams[upstreamKey(target.url as string)] = { state: "down", circuit: CLOSED, checkedAt: now, ...health };
    const error = retryAfter === undefined ? errors[kind]!() : new ProxyError({ ...errors[kind]!().toInfo(), retryAfter });
    return [target, { target: target.name, error }] as [Target, { target: string; error: ProxyError }];
  });
  return waitFor(failed, kinds, snapshot, now, maxRetryAfterMs);
}

describe("waitFor: every target failed", () => {
  it("a server refusing connections that was ready moments ago is restarting: wait for it", () => {
    expect(verdict([{ target: llama(), kind: "unreachable", health: { state: "down", readyAt: now - 2000 } }])).toBe("comeback");
    // The snapshot was taken before it died: it still says ready.
    expect(verdict([{ target: llama(), kind: "unreachable", health: { state: "ready", readyAt: now - 500 } }])).toBe("comeback");
  });

  it("one refusing connections for longer than the restart window, or never seen ready, is gone: answered at once", () => {
    expect(verdict([{ target: llama(), kind: "unreachable", health: { state: "down", readyAt: now - RESTARTING_MS - 1 } }])).toBeNull();
    expect(verdict([{ target: llama(), kind: "unreachable", health: { state: "down" } }])).toBeNull();
    expect(verdict([{ target: llama(), kind: "unreachable" }])).toBeNull();
  });

  it("of two servers down, one restarting is enough to wait", () => {
    expect(verdict([
      { target: llama(), kind: "unreachable", health: { state: "down" } },
      { target: llama(), kind: "unreachable", health: { state: "down", readyAt: now - 60_000 } },
    ])).toBe("comeback");
  });

  it("a server loading its model (its answer or the snapshot) is waited for", () => {
    expect(verdict([{ target: llama(), kind: "loading" }])).toBe("comeback");
    expect(verdict([{ target: llama(), kind: "unreachable", health: { state: "loading" } }])).toBe("comeback");
  });

  it("a server that timed out is there and slow: not asked again in a loop", () => {
    expect(verdict([{ target: llama(), kind: "timeout", health: { state: "ready", readyAt: now - 100 } }])).toBeNull();
  });

  it("a full server waits for capacity; a client mistake or a target that is not down answers at once", () => {
    expect(verdict([{ target: llama(), kind: "unreachable", health: { state: "down", readyAt: now - 100 } }, { target: llama(), kind: "busy" }])).toBe("capacity");
    expect(verdict([{ target: llama(), kind: "unreachable", health: { state: "down", readyAt: now - 100 } }, { target: llama(), kind: "client" }])).toBeNull();
    expect(verdict([{ target: llama(), kind: "unreachable", health: { state: "down", readyAt: now - 100 } }, { target: browser, kind: "misconfigured" }])).toBeNull();
  });

  it("a browser session whose page said the model is not loaded: waited for while the hub asks it again within retries.maxRetryAfterMs, answered at once after", () => {
    // The hub's bench is the session's Retry-After: 1 s, then 2 s, 4 s ... (issue 40, finding 12).
    expect(verdict([{ target: browser, kind: "loading", retryAfter: 1 }], 2000)).toBe("comeback");
    expect(verdict([{ target: browser, kind: "loading", retryAfter: 2 }], 2000)).toBe("comeback");
    expect(verdict([{ target: browser, kind: "loading", retryAfter: 4 }], 2000)).toBeNull();
    // A server loading its model is watched by the health hub: waited for whatever its Retry-After.
    expect(verdict([{ target: llama(), kind: "loading", retryAfter: 30 }], 2000)).toBe("comeback");
  });
});
