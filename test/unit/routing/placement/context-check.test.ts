import { beforeEach, describe, expect, it } from "vitest";
import { CLOSED } from "../../../../src/health/circuit-breaker.ts";
import type { HealthSnapshot } from "../../../../src/health/upstream-health.ts";
import { byContext, estimateTokens, resetTokenCounts, type ServerCounts } from "../../../../src/routing/placement/context-check.ts";
import { prefixesOf } from "../../../../src/routing/placement/prompt-prefixes.ts";
import { ServerLedger } from "../../../../src/routing/placement/server-ledger.ts";
import type { Target } from "../../../../src/routing/target.ts";
import { capabilitiesOf } from "../../../../src/upstreams/registry/adapters.ts";

// The window check over llama-servers of different windows, their counts scripted: which prompts are
// counted, which decide alone, and that a count settles it whatever the estimate said.
let n = 0;
const llama = (): Target => ({ kind: "llama", url: `http://10.1.0.${++n}:8080`, name: `llama:10.1.0.${n}:8080` });
const key = (t: Target) => capabilitiesOf(t).server!.key;
const snapshotOf = (windows: Array<[Target, number]>): HealthSnapshot => ({
  at: 0,
  upstreams: Object.fromEntries(windows.map(([t, w]) => [key(t), { state: "ready", circuit: CLOSED, checkedAt: 1, contextWindow: w }])),
});
const sizeOf = (parts: string[], maxTokens?: number) => ({ chars: parts.reduce((s, p) => s + p.length, 0), prefixes: prefixesOf(parts), ...(maxTokens !== undefined ? { maxTokens } : {}) });
const counts = (count: ServerCounts["count"]): ServerCounts => ({ count, window: async () => undefined });
const message = (content: string) => JSON.stringify({ role: "user", content });

describe("byContext (the window rule)", () => {
  beforeEach(() => resetTokenCounts());

  it("issue 41: tiny prompts answered before do not make a long prompt that fits look too long; the server's count decides", async () => {
    const a = llama();
    const b = llama();
    const ledger = new ServerLedger();
    // A burst of tiny prompts: ~60 characters, 24 tokens each (the template's fixed tokens dominate).
    for (let i = 0; i < 12; i++) for (const t of [a, b]) ledger.learn(key(t), { chars: 60 + i, promptTokens: 24 });
    // 1,421 tokens by the servers' own count, about 6,000 characters of JSON.
    const size = sizeOf([message("x".repeat(6000))], 512);
    const counted: string[] = [];
    const { ordered, tooLong } = await byContext([a, b], size, snapshotOf([[a, 2048], [b, 2048]]), ledger, counts(async (t) => (counted.push(t.name), 1421)));
    expect(ordered).toEqual([a, b]);
    expect(tooLong).toEqual([]);
    expect(counted).toEqual([a.name, b.name]);
    // The count is kept: the same prompt again is not counted again.
    await byContext([a, b], size, snapshotOf([[a, 2048], [b, 2048]]), ledger, counts(async (t) => (counted.push(t.name), 1421)));
    expect(counted).toHaveLength(2);
  });

  it("a prompt clearly over a window is skipped without a count, one near it is counted, one clearly under is not", async () => {
    const small = llama();
    const mid = llama();
    const big = llama();
    const ledger = new ServerLedger();
    const size = sizeOf([message("y".repeat(16_000))]); // ~4,000 tokens at the prior rate
    const counted: string[] = [];
    const { ordered, tooLong } = await byContext([small, mid, big], size, snapshotOf([[small, 512], [mid, 4096], [big, 32_768]]), ledger, counts(async (t) => (counted.push(t.name), 3829)));
    expect(counted).toEqual([mid.name]);
    expect(ordered).toEqual([mid, big]);
    expect(tooLong.map((x) => x.target)).toEqual([small]);
    expect(tooLong[0]!.error.code).toBe("context_length_exceeded");
  });

  it("a count over the window skips the server with the true count in its error; a server that could not count is tried", async () => {
    const a = llama();
    const b = llama();
    const size = sizeOf([message("z".repeat(3000))]);
    const { ordered, tooLong } = await byContext([a, b], size, snapshotOf([[a, 1024], [b, 1024]]), new ServerLedger(), counts(async (t) => (t === a ? 1100 : undefined)));
    expect(ordered).toEqual([b]);
    expect(tooLong[0]!.error.message).toMatch(/maximum context length is 1024 tokens\. However, your messages resulted in 1100 tokens\./);
  });

  it("a conversation's next turn is estimated from its earlier turn's count plus the new part at the fitted rate", async () => {
    const a = llama();
    const ledger = new ServerLedger();
    const first = [message("w".repeat(4000))];
    const counted = await byContext([a, llama()], sizeOf(first), snapshotOf([[a, 1600]]), ledger, counts(async () => 1500));
    expect(counted.ordered[0]).toBe(a);
    const next = sizeOf([...first, message("v".repeat(400))]);
    // 1,500 counted + ~420 characters at the prior rate.
    expect(estimateTokens(ledger, key(a), next)).toBeGreaterThan(1500);
    expect(estimateTokens(ledger, key(a), next)).toBeLessThan(1700);
  });

  it("issue 41, the reverse: a server not sampled yet tells its window itself, and a ~3,000-word prompt is not sent to its 512 tokens", async () => {
    const small = llama();
    const big = llama();
    const windows = new Map([[small, 512], [big, 32_768]]);
    const size = sizeOf([message("word ".repeat(3000))]);
    const { ordered, tooLong } = await byContext([small, big], size, { at: 0, upstreams: {} }, new ServerLedger(), { count: async () => 3829, window: async (t) => windows.get(t) });
    expect(ordered).toEqual([big]);
    expect(tooLong.map((x) => x.target)).toEqual([small]);
  });
});
