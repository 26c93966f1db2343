import { describe, expect, it } from "vitest";
import { CLOSED, afterSample, circuitState, recordFailure, recordProbe, recordSuccess } from "../../../src/health/circuit-breaker.ts";

const policy = { failureThreshold: 3, cooldownMs: 1000, maxCooldownMs: 4000 };

describe("circuit breaker", () => {
  it("opens after failureThreshold consecutive failures, not before", () => {
    let c = CLOSED;
    c = recordFailure(c, 0, policy);
    c = recordFailure(c, 0, policy);
    expect(circuitState(c, 0)).toBe("closed");
    c = recordFailure(c, 0, policy);
    expect(circuitState(c, 0)).toBe("open");
    expect(c.until).toBe(1000);
  });

  it("a success resets the count", () => {
    let c = recordFailure(recordFailure(CLOSED, 0, policy), 0, policy);
    c = recordSuccess(c);
    c = recordFailure(c, 0, policy);
    expect(circuitState(c, 0)).toBe("closed");
  });

  it("is half-open once the cooldown passed; a failure then re-opens with twice the cooldown, capped", () => {
    let c = CLOSED;
    for (let i = 0; i < 3; i++) c = recordFailure(c, 0, policy);
    expect(circuitState(c, 999)).toBe("open");
    expect(circuitState(c, 1000)).toBe("half-open");
    c = recordFailure(c, 1000, policy);
    expect(circuitState(c, 1000)).toBe("open");
    expect(c.until).toBe(3000);
    c = recordFailure(c, 3000, policy);
    expect(c.until).toBe(3000 + 4000);
    c = recordFailure(c, 7000, policy);
    expect(c.cooldownMs).toBe(4000);
  });

  it("a half-open success closes it", () => {
    let c = CLOSED;
    for (let i = 0; i < 3; i++) c = recordFailure(c, 0, policy);
    expect(circuitState(recordSuccess(c), 2000)).toBe("closed");
  });

  it("honours an upstream's Retry-After as a cooldown even below the threshold", () => {
    const c = recordFailure(CLOSED, 0, policy, 2500);
    expect(circuitState(c, 2000)).toBe("open");
    expect(circuitState(c, 2500)).toBe("half-open");
  });

  it("probes: a healthy /health keeps it half-open (traffic may try), a failed one re-opens with backoff", () => {
    let c = CLOSED;
    for (let i = 0; i < 3; i++) c = recordFailure(c, 0, policy);
    expect(recordProbe(c, 500, true, policy)).toBe(c);
    expect(circuitState(recordProbe(c, 1000, true, policy), 1000)).toBe("half-open");
    const reopened = recordProbe(c, 1000, false, policy);
    expect(circuitState(reopened, 1000)).toBe("open");
    expect(reopened.until).toBe(3000);
  });
});

describe("a health sample (issue 28: a restarted server rejoins at once)", () => {
  /** A circuit that churned: opened, failed its half-open tries, its cooldown grown to the maximum. */
  const churned = () => {
    let c = CLOSED;
    for (let i = 0; i < 3; i++) c = recordFailure(c, 0, policy);
    c = recordFailure(c, 1000, policy);
    c = recordFailure(c, 3000, policy);
    return c;
  };

  it("seen down, then ready: the circuit closes at once, whatever cooldown it had earned", () => {
    const c = churned();
    expect(c.cooldownMs).toBe(4000);
    expect(circuitState(c, 3100)).toBe("open");
    const down = afterSample(c, false, false, 3100, policy);
    expect(down.sawDown).toBe(true);
    expect(circuitState(down.circuit, 3100)).toBe("open");
    const up = afterSample(down.circuit, down.sawDown, true, 3300, policy);
    expect(up).toEqual({ circuit: CLOSED, sawDown: false });
  });

  it("ready all along while its requests fail: the cooldown holds (the breaker still protects)", () => {
    const c = churned();
    const sampled = afterSample(c, false, true, 3100, policy);
    expect(sampled.sawDown).toBe(false);
    expect(circuitState(sampled.circuit, 3100)).toBe("open");
    // Once the cooldown has passed, a ready sample lets traffic try (half-open), as before.
    expect(circuitState(afterSample(c, false, true, c.until, policy).circuit, c.until)).toBe("half-open");
  });

  it("a closed circuit forgets having been down", () => {
    expect(afterSample(CLOSED, true, false, 0, policy)).toEqual({ circuit: CLOSED, sawDown: false });
  });
});
