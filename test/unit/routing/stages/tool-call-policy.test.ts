// The min-score policy stage (src/routing/rewrite/tool-call-policy.ts), driven the way the pipeline drives it.
import { describe, expect, it } from "vitest";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import type { UpstreamEvent } from "../../../../src/events/events.ts";
import type { Target } from "../../../../src/routing/target.ts";
import { ToolCallPolicy, type RewrittenAttempt } from "../../../../src/routing/rewrite/tool-call-policy.ts";
import { named } from "../../../../src/upstreams/registry/adapters.ts";

const call = (index: number): UpstreamEvent => ({ type: "toolCall", index, id: `call_${index}`, name: "f", argumentsDelta: "{}" });

function attempt(target: Target, score: number, events: UpstreamEvent[] = [{ type: "finish", reason: "tool_calls" } as UpstreamEvent]): RewrittenAttempt & { cancelled: boolean } {
  let i = 0;
  const a = {
    target,
    first: call(0),
    cancelled: false,
    events: { next: async () => events[i++] ?? null, cancel: () => void (a.cancelled = true) },
    reports: () => [{ index: 0, id: "call_0", score, problems: [] }],
  };
  return a;
}

describe("the tool-call policy", () => {
  it("steps: each target, then its constrained retry where its kind can constrain", () => {
    const [s, b] = [named({ kind: "llama", url: "http://a:1" }), named({ kind: "browser", model: "x" })];
    const policy = new ToolCallPolicy([s, b], 0.8, false);
    expect(policy.steps.map((st) => [st.target.name, st.constrained])).toEqual([["llama:a:1", false], ["llama:a:1", true], ["browser:x", false]]);
  });

  it("delivers the first answer that scores well enough, discarding the best kept so far (charged as discarded)", async () => {
    const s = named({ kind: "llama", url: "http://a:1" });
    const discarded: UpstreamEvent[][] = [];
    const policy = new ToolCallPolicy([s], 0.8, false, (e) => discarded.push(e));
    const [plain, constrained] = policy.steps;
    await policy.beforeStep(plain!);
    const poor = attempt(s, 0.3);
    expect(await policy.consider(plain!, poor)).toBeNull();
    await policy.beforeStep(constrained!);
    const good = await policy.consider(constrained!, attempt(s, 0.9));
    expect(good).toMatchObject({ attempts: 2, belowMinScore: false });
    // The poor answer was read whole (non-stream) and is charged as generated and not delivered.
    expect(discarded).toHaveLength(1);
    expect(discarded[0]![0]).toEqual(poor.first);
  });

  it("with every step taken and none good enough, the best one, flagged", async () => {
    const s = named({ kind: "llama", url: "http://a:1" });
    const policy = new ToolCallPolicy([s], 0.8, false);
    for (const [i, step] of policy.steps.entries()) {
      await policy.beforeStep(step);
      expect(await policy.consider(step, attempt(s, i === 0 ? 0.5 : 0.2))).toBeNull();
    }
    const end = policy.end();
    expect(end.belowMinScore).toBe(true);
    expect(end.attempt.reports()[0]!.score).toBe(0.5);
  });

  it("a failure that no retry would change ends it at once; with only failures, the final error", async () => {
    const s = named({ kind: "llama", url: "http://a:1" });
    const policy = new ToolCallPolicy([s], 0.8, false);
    await policy.beforeStep(policy.steps[0]!);
    policy.failed(policy.steps[0]!, new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: "down" }));
    await policy.beforeStep(policy.steps[1]!);
    expect(() => policy.failed(policy.steps[1]!, new ProxyError({ status: 400, code: "invalid_request_error", message: "bad" }))).toThrow(ProxyError);
    const only = new ToolCallPolicy([s], 0.8, false);
    await only.beforeStep(only.steps[0]!);
    only.failed(only.steps[0]!, new ProxyError({ status: 502, code: "upstream_unreachable", retryable: true, message: "down" }));
    expect(() => only.end()).toThrow(/down/);
  });
});
