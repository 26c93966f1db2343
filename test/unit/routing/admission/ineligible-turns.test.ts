import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../../src/config/config.ts";
import { resetHealthCache } from "../../../../src/health/health-client.ts";
import { resetTokenCounts } from "../../../../src/routing/placement/context-check.ts";
import { isolateState } from "../../../../src/routing/isolate/isolate-state.ts";
import { promptPrefixes } from "../../../../src/routing/placement/prompt-prefixes.ts";
import type { Target } from "../../../../src/routing/target.ts";
import { tryTargets, type AttemptOne } from "../../../../src/routing/attempt/try-targets.ts";

// Issue 41, fault 2: a waiter was given turns on a free server its prompt cannot fit (a turn is for
// any free seat of its plan), failed each pass at once, was given the next turn at once again, and
// spent the wait taking turns outside the line: the wake-up of the server it can use (its request
// ending) found the line empty and went to whoever came next; it could end 503 no_capacity after
// queue.maxWaitMs with that server freeing again and again. Closed ports: the slot-count and pool
// reads are refused at once, so each server has one slot as admission counts it.
const A: Target = { kind: "llama", url: "http://127.0.0.1:9/a", name: "A" };
const B: Target = { kind: "llama", url: "http://127.0.0.1:9/b", name: "B" };
const parsed = parseConfig({ SWITCHYARD_ENV: "dev", SWITCHYARD_CONFIG: JSON.stringify({ models: { ineligible: { targets: [{ kind: "llama", url: A.url }, { kind: "llama", url: B.url }] } }, queue: { maxWaitMs: 5000 } }) });
if (!parsed.ok) throw new Error("config");
const config = parsed.config;
const windows = new Map([[A.name, 4096], [B.name, 1024]]);

function request(content: string, counted: number, attemptOne: AttemptOne<string>) {
  const messages = [{ role: "user", content }];
  const prefixes = promptPrefixes(messages);
  return tryTargets([A, B], {
    config,
    env: {},
    model: "ineligible",
    signal: new AbortController().signal,
    queue: { key: null, priority: 0 },
    size: () => ({ chars: prefixes.at(-1)!.chars, prefixes }),
    serverCounts: { count: async () => counted, window: async (t) => windows.get(t.name) },
  }, attemptOne);
}

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

describe("admission turns and servers a request cannot use", () => {
  it("a waiter whose prompt only fits the busy server waits in line for it (not taking turns on the free one) and gets it as it frees", async () => {
    resetHealthCache();
    resetTokenCounts();
    // R1 holds A's one slot.
    const first: Target[] = [];
    const held = await request("short", 10, async (t) => (first.push(t), "answer"));
    expect(first[0]).toBe(A);
    // R2: ~3,000 tokens, counted by A as 2,900 (fits its 4,096), clearly over B's 1,024.
    const handed: string[] = [];
    const next = request("x".repeat(12_000), 2900, async (t) => (handed.push(t.name), "answer"));
    // It waits in the line (today it was handed B's turn at once after each pass, never in line).
    expect(await until(() => isolateState().queue.waiting("ineligible") === 1, 1000)).toBe(true);
    expect(await until(() => isolateState().queue.waiting("ineligible") !== 1, 300)).toBe(false);
    // R1 ends: R2 is handed A at once, the only attempt it was handed.
    const endedAt = Date.now();
    held.placed!.end(Date.now());
    const done = await next;
    expect(Date.now() - endedAt).toBeLessThan(100);
    expect(handed).toEqual(["A"]);
    done.placed!.end(Date.now());
  });
});
