import { describe, expect, it } from "vitest";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { failureClass, finalOutcome, targetOutcomes, type TargetFailure } from "../../../../src/routing/attempt/final-outcome.ts";
import { contextLengthMessage } from "../../../../src/errors/context-length.ts";

const err = (init: ConstructorParameters<typeof ProxyError>[0]) => new ProxyError(init);
const LLAMA = "llama:10.0.0.1:8080";
const BROWSER = "browser:Qwen2.5-0.5B-Instruct-q4f16_1-MLC";

// Every kind of failure a target can end a request with, best answer for the client first.
const RANKED: Array<[string, TargetFailure]> = [
  ["context_length_exceeded", { target: LLAMA, error: err({ status: 400, code: "context_length_exceeded", param: "messages", message: "too long" }) }],
  ["client 400", { target: LLAMA, error: err({ status: 400, code: "invalid_value", message: "bad input" }) }],
  ["413 from a browser session", { target: BROWSER, error: err({ status: 413, code: "request_too_large", retryable: true, message: "too large for the relay" }) }],
  ["no_capacity, Retry-After 2", { target: LLAMA, error: err({ status: 503, code: "no_capacity", retryAfter: 2, retryable: true, message: "no free slot" }) }],
  ["model_loading, Retry-After 5", { target: LLAMA, error: err({ status: 503, code: "model_loading", retryAfter: 5, retryable: true, message: "loading" }) }],
  ["no_capacity, Retry-After 5", { target: BROWSER, error: err({ status: 503, code: "no_capacity", retryAfter: 5, retryable: true, message: "no session" }) }],
  ["circuit open, no_capacity Retry-After 2", { target: LLAMA, circuitOpen: true, error: err({ status: 503, code: "no_capacity", retryAfter: 2, retryable: true, message: "rate limited" }) }],
  ["upstream_timeout", { target: LLAMA, error: err({ status: 504, code: "upstream_timeout", retryable: true, message: "timeout" }) }],
  ["upstream_error 502", { target: LLAMA, error: err({ status: 502, code: "upstream_error", retryable: true, message: "500 from the server" }) }],
  ["config_error (another failure)", { target: LLAMA, error: err({ status: 500, code: "config_error", retryable: true, message: "secret not set" }) }],
  ["upstream_unreachable", { target: LLAMA, error: err({ status: 502, code: "upstream_unreachable", retryable: true, message: "refused" }) }],
  ["circuit open, upstream_unreachable", { target: LLAMA, circuitOpen: true, error: err({ status: 502, code: "upstream_unreachable", retryable: true, message: "refused again" }) }],
  ["implicit browser fallback, no session", { target: BROWSER, implicit: true, error: err({ status: 503, code: "no_capacity", retryAfter: 5, retryable: true, message: "no session" }) }],
  ["skipped (no session for the endpoint)", { target: BROWSER, skipped: true, error: err({ status: 503, code: "no_capacity", retryAfter: 5, retryable: true, message: "no embedding session" }) }],
];

describe("finalOutcome", () => {
  describe.each(RANKED.map(([name, f], i) => [name, f, i] as const))("%s", (_name, a, i) => {
    it.each(RANKED.filter((_, j) => j !== i).map(([name, f]) => [name, f] as const))("against %s: the same answer in either order", (_other, b) => {
      const expected = i < RANKED.findIndex(([, f]) => f === b) ? a : b;
      expect(finalOutcome([a, b])).toBe(expected);
      expect(finalOutcome([b, a])).toBe(expected);
    });
  });

  it("every permutation of the whole set gives the best one", () => {
    const all = RANKED.map(([, f]) => f);
    for (let seed = 1; seed <= 20; seed++) {
      const shuffled = shuffle(all, seed);
      expect(finalOutcome(shuffled)).toBe(all[0]);
      expect(finalOutcome(shuffled.filter((f) => f.error.status !== 400 && f.error.status !== 413))).toBe(all[3]);
    }
  });

  it("the tester's setup: a dead llama and a declared browser with no session is 503 no_capacity whether or not the llama's circuit is open", () => {
    const browser = RANKED[5]![1];
    const dead: TargetFailure = { target: LLAMA, error: err({ status: 502, code: "upstream_unreachable", retryable: true, message: "refused" }) };
    expect(finalOutcome([dead, browser])?.error.code).toBe("no_capacity");
    expect(finalOutcome([browser, { ...dead, circuitOpen: true }])?.error.code).toBe("no_capacity");
    expect(finalOutcome([browser, { ...dead, circuitOpen: true }])?.error.retryAfter).toBe(5);
  });

  it("zero config: the implicit browser fallback's no session never hides why the server failed", () => {
    const implicit = RANKED[12]![1];
    for (const [, f] of RANKED.slice(0, 12)) {
      expect(finalOutcome([f, implicit])).toBe(f);
      expect(finalOutcome([implicit, f])).toBe(f);
    }
    expect(finalOutcome([implicit])).toBe(implicit);
  });

  it("a declared browser target's no session is a capacity answer like any other", () => {
    expect(failureClass(RANKED[5]![1])).toBe("capacity");
    expect(failureClass(RANKED[12]![1])).toBe("absent");
  });

  it("between equal failures the one tried first is chosen", () => {
    const a: TargetFailure = { target: "llama:a:1", error: err({ status: 502, code: "upstream_unreachable", retryable: true, message: "a" }) };
    const b: TargetFailure = { target: "llama:b:1", error: err({ status: 502, code: "upstream_unreachable", retryable: true, message: "b" }) };
    expect(finalOutcome([a, b])).toBe(a);
    expect(finalOutcome([b, a])).toBe(b);
  });

  it("no failure: undefined", () => {
    expect(finalOutcome([])).toBeUndefined();
  });
});

describe("targetOutcomes", () => {
  it("each target's code and status in the order given; skipped ones marked", () => {
    expect(targetOutcomes([RANKED[10]![1], RANKED[13]![1]])).toEqual([
      { target: LLAMA, code: "upstream_unreachable", status: 502 },
      { target: BROWSER, code: "no_capacity", status: 503, skipped: true },
    ]);
  });
});

/** A deterministic shuffle (mulberry32). */
function shuffle<T>(list: readonly T[], seed: number): T[] {
  let s = seed;
  const rand = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("finalOutcome: prompts too long everywhere", () => {
  it("names the largest window there is, whichever target was tried first or skipped", () => {
    const too = (target: string, window: number, skipped = false): TargetFailure => ({
      target,
      error: err({ status: 400, code: "context_length_exceeded", param: "messages", retryable: true, message: contextLengthMessage(3000, window) }),
      ...(skipped ? { skipped } : {}),
    });
    const failures = [too("llama:a:1", 1024, true), too("llama:b:1", 2048, true), too("llama:c:1", 512, true)];
    expect(finalOutcome(failures)?.target).toBe("llama:b:1");
    expect(finalOutcome([...failures].reverse())?.target).toBe("llama:b:1");
    // A server that answered its own 400 outranks a skip (it is an answer, not an estimate).
    expect(finalOutcome([...failures, too("llama:d:1", 256)])?.target).toBe("llama:d:1");
  });
});
