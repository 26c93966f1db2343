import { describe, expect, it } from "vitest";
import { advance, nextStatus, TERMINAL, windowSeconds, type Batch, type BatchEvent, type BatchStatus } from "../../../src/batch/batch-object.ts";

const STATUSES: BatchStatus[] = ["validating", "failed", "in_progress", "finalizing", "completed", "expired", "cancelling", "cancelled"];
const EVENTS: BatchEvent[] = ["validated", "invalid", "drained", "cancel", "expire", "written"];

describe("the batch status machine", () => {
  it("follows OpenAI's statuses", () => {
    expect(nextStatus("validating", "validated")).toBe("in_progress");
    expect(nextStatus("validating", "invalid")).toBe("failed");
    expect(nextStatus("in_progress", "drained")).toBe("finalizing");
    expect(nextStatus("finalizing", "written")).toBe("completed");
    expect(nextStatus("in_progress", "cancel")).toBe("cancelling");
    expect(nextStatus("cancelling", "drained")).toBe("cancelled");
    expect(nextStatus("in_progress", "expire")).toBe("finalizing");
    expect(nextStatus("finalizing", "written", true)).toBe("expired");
  });

  it("nothing moves a finished batch, and a finalizing one cannot be cancelled", () => {
    for (const s of TERMINAL) for (const e of EVENTS) expect(nextStatus(s, e)).toBeNull();
    expect(nextStatus("finalizing", "cancel")).toBeNull();
  });

  it("every path from validating ends in a terminal status", () => {
    const seen = new Set<BatchStatus>();
    const walk = (s: BatchStatus, depth: number) => {
      seen.add(s);
      expect(depth).toBeLessThan(6);
      for (const e of EVENTS) for (const expiring of [false, true]) {
        const n = nextStatus(s, e, expiring);
        if (n && n !== s) walk(n, depth + 1);
      }
    };
    walk("validating", 0);
    expect([...seen].sort()).toEqual([...STATUSES].sort());
  });

  it("advance stamps the status's time and leaves the batch as it was when the event does not apply", () => {
    const b = { id: "batch_x", status: "in_progress", cancelling_at: null } as unknown as Batch;
    const c = advance(b, "cancel", 1234);
    expect(c.status).toBe("cancelling");
    expect(c.cancelling_at).toBe(1234);
    expect(advance(c, "validated", 99)).toBe(c);
  });
});

describe("completion_window", () => {
  it("24h, or a shorter window in s, m or h", () => {
    expect(windowSeconds("24h")).toBe(86_400);
    expect(windowSeconds("90s")).toBe(90);
    expect(windowSeconds("30m")).toBe(1800);
    expect(windowSeconds("25h")).toBeNull();
    expect(windowSeconds("0s")).toBeNull();
    expect(windowSeconds("1d")).toBeNull();
    expect(windowSeconds(24)).toBeNull();
  });
});
