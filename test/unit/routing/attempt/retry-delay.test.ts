import { describe, expect, it } from "vitest";
import { parseRetryAfter } from "../../../../src/http/parse-retry-after.ts";
import { retryDelayMs } from "../../../../src/routing/attempt/retry-delay.ts";
import { classifyFailure, countsAgainstUpstream, retriesSameTarget } from "../../../../src/health/classify-failure.ts";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";

const policy = { perTarget: 3, maxAttempts: 6, backoffMs: 100, maxBackoffMs: 400, maxRetryAfterMs: 2000 };

describe("retry delay", () => {
  it("doubles from backoffMs up to maxBackoffMs, jitter in the upper half", () => {
    expect(retryDelayMs(1, undefined, policy, () => 0)).toBe(50);
    expect(retryDelayMs(1, undefined, policy, () => 1)).toBe(100);
    expect(retryDelayMs(2, undefined, policy, () => 1)).toBe(200);
    expect(retryDelayMs(5, undefined, policy, () => 1)).toBe(400);
  });

  it("honours a short Retry-After exactly and moves on from a long one", () => {
    expect(retryDelayMs(1, 1500, policy)).toBe(1500);
    expect(retryDelayMs(1, 2001, policy)).toBeNull();
  });

  it("parses delay-seconds and HTTP dates", () => {
    expect(parseRetryAfter("3", 0)).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(parseRetryAfter("soon", 0)).toBeUndefined();
    expect(parseRetryAfter(null, 0)).toBeUndefined();
  });
});

describe("failure classes", () => {
  const err = (init: ConstructorParameters<typeof ProxyError>[0]) => new ProxyError(init);
  it("client mistakes are never retried; departed clients stop everything", () => {
    expect(classifyFailure(err({ status: 400, code: "context_length_exceeded", message: "" }))).toBe("client");
    expect(classifyFailure(err({ status: 499, code: "client_closed_request", message: "" }))).toBe("gone");
  });
  it("5xx and busy retry the same target; unreachable, timeout and loading move on", () => {
    const kinds = [
      ["upstream_unreachable", "unreachable"],
      ["upstream_timeout", "timeout"],
      ["model_loading", "loading"],
      ["no_capacity", "busy"],
      ["upstream_error", "broken"],
      ["config_error", "unavailable"],
    ] as const;
    for (const [code, kind] of kinds) expect(classifyFailure(err({ status: 502, code, message: "", retryable: true }))).toBe(kind);
    expect(retriesSameTarget("broken")).toBe(true);
    expect(retriesSameTarget("busy")).toBe(true);
    expect(retriesSameTarget("unreachable")).toBe(false);
    expect(retriesSameTarget("timeout")).toBe(false);
    expect(countsAgainstUpstream("busy")).toBe(false);
    expect(countsAgainstUpstream("unavailable")).toBe(false);
    expect(countsAgainstUpstream("timeout")).toBe(true);
  });
});

describe("an upstream that refuses Switchyard itself", () => {
  it("401/403/404 are misconfiguration: never retried on the same target, counted against it", () => {
    const e = new ProxyError({ status: 502, code: "upstream_error", message: "", retryable: true });
    expect(classifyFailure(e, 401)).toBe("misconfigured");
    expect(classifyFailure(e, 404)).toBe("misconfigured");
    expect(classifyFailure(e, 500)).toBe("broken");
    expect(retriesSameTarget("misconfigured")).toBe(false);
    expect(countsAgainstUpstream("misconfigured")).toBe(true);
  });
});
