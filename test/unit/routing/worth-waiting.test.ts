// What a pass that failed on every target is worth waiting for (src/routing/worth-waiting.ts): a
// full server, a loading one, or one restarting (refusing connections, ready moments ago); a server
// gone for good, never ready, or merely slow is answered at once.
import { describe, expect, it } from "vitest";
import { ProxyError } from "../../../src/errors/proxy-error.ts";
import type { FailureKind } from "../../../src/health/classify-failure.ts";
import { CLOSED } from "../../../src/health/circuit-breaker.ts";
import { upstreamKey, type HealthSnapshot, type UpstreamHealth } from "../../../src/health/upstream-health.ts";
import type { Target } from "../../../src/routing/target.ts";
import { RESTARTING_MS, waitFor } from "../../../src/routing/worth-waiting.ts";

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
function verdict(cases: Array<{ target: Target; kind: FailureKind | "busy"; health?: Partial<UpstreamHealth> }>) {
  const snapshot: HealthSnapshot = { at: now, upstreams: {} };
  const kinds = new Map<Target, FailureKind>();
  const failed = cases.map(({ target, kind, health }) => {
    if (kind !== "busy") kinds.set(target, kind);
    if (health && "url" in target) snapshot.upstreams[upstreamKey(target.url as string)] = { state: "down", circuit: CLOSED, checkedAt: now, ...health };
    return [target, { target: target.name, error: errors[kind]!() }] as [Target, { target: string; error: ProxyError }];
  });
  return waitFor(failed, kinds, snapshot, now);
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
});
