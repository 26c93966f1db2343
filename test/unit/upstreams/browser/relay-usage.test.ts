import { describe, expect, it } from "vitest";
import { checkRelayUsage, newTally, ownUsage, tallyChunk, usageBounds, usageCheckedLine } from "../../../../src/upstreams/browser/relay-usage.ts";
import { normalizeWebLlmChunk, tokenCount } from "../../../../src/upstreams/browser/normalize-web-llm-chunk.ts";

// The usage a serving page reports, checked against what the request allowed and what was relayed.

function answered(body: Record<string, unknown>, pieces: string[]) {
  const t = newTally("chat", JSON.stringify({ type: "request", id: "rl_1", body }), body);
  for (const p of pieces) tallyChunk(t, { object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: p } }] });
  return t;
}
const body = { messages: [{ role: "user", content: "Say hello to a friend." }], max_tokens: 16 };

describe("checkRelayUsage", () => {
  it("keeps usage within bounds, and absent usage", () => {
    const t = answered(body, ["Hello", " there"]);
    expect(checkRelayUsage({ prompt_tokens: 12, completion_tokens: 3 }, t)).toEqual({ ok: true });
    expect(checkRelayUsage(null, t)).toEqual({ ok: true });
    expect(checkRelayUsage(undefined, t)).toEqual({ ok: true });
  });

  it.each([
    ["1e15", 1e15, "is more than the request can have used"],
    ['"abc"', "abc", "must be a number, not string"],
    ["-1", -1, "must be a non-negative integer"],
    ["1.5", 1.5, "must be a non-negative integer"],
    ["missing", undefined, "must be a number, not missing"],
  ])("prompt_tokens %s is replaced by Switchyard's own count; the valid count is kept", (_, value, why) => {
    const t = answered(body, ["Hello", " there"]);
    const r = checkRelayUsage({ prompt_tokens: value, completion_tokens: 3, extra: { decode_tokens_per_s: 9 } }, t);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const own = ownUsage(t);
    expect(r.usage).toEqual({ prompt_tokens: own.prompt_tokens, completion_tokens: 3, total_tokens: own.prompt_tokens + 3, extra: { decode_tokens_per_s: 9 } });
    expect(r.problem).toContain(`usage.prompt_tokens ${why}`);
  });

  it("completion_tokens beyond max_tokens, or beyond what the relayed text can hold, is replaced", () => {
    const t = answered(body, ["Hello", " there"]);
    expect(usageBounds(t).completion).toBe(16);
    expect(checkRelayUsage({ prompt_tokens: 12, completion_tokens: 17 }, t)).toMatchObject({ ok: false, usage: { prompt_tokens: 12, completion_tokens: 3 } });
    const unbounded = answered({ messages: body.messages }, ["Hi"]);
    // 3 tokens a character at most (byte-level), one per chunk, and a few silent ones.
    expect(usageBounds(unbounded).completion).toBe(3 * 2 + 1 + 16);
    expect(checkRelayUsage({ prompt_tokens: 12, completion_tokens: 23 }, unbounded)).toEqual({ ok: true });
    expect(checkRelayUsage({ prompt_tokens: 12, completion_tokens: 24 }, unbounded).ok).toBe(false);
  });

  it("the model's context window bounds both counts", () => {
    const t = answered(body, ["Hello"]);
    expect(checkRelayUsage({ prompt_tokens: 100, completion_tokens: 2 }, t, 64).ok).toBe(false);
    expect(checkRelayUsage({ prompt_tokens: 60, completion_tokens: 2 }, t, 64)).toEqual({ ok: true });
  });

  it("usage that is not an object becomes Switchyard's own count", () => {
    const t = answered(body, ["Hello"]);
    expect(checkRelayUsage("lots", t)).toMatchObject({ ok: false, usage: { ...ownUsage(t) }, problem: "usage must be an object" });
  });

  it("embeddings: only prompt_tokens is checked, and total_tokens follows it", () => {
    const req = { input: ["embed me", "and me"] };
    const t = newTally("embeddings", JSON.stringify({ type: "request", id: "rl_1", endpoint: "embeddings", body: req }), req);
    expect(checkRelayUsage({ prompt_tokens: 6, total_tokens: 6 }, t)).toEqual({ ok: true });
    expect(checkRelayUsage({ prompt_tokens: 1e15, total_tokens: 1e15 }, t)).toMatchObject({ ok: false, usage: { prompt_tokens: ownUsage(t).prompt_tokens, total_tokens: ownUsage(t).prompt_tokens } });
  });
});

describe("usageCheckedLine: the line passed on for a page's chunk or done", () => {
  it("as sent when its usage is absent or within bounds", () => {
    const t = answered(body, ["Hello", " there"]);
    const raw = '{"type":"done","id":"rl_1","usage":{"prompt_tokens":12,"completion_tokens":3}}';
    expect(usageCheckedLine({ type: "done", id: "rl_1", usage: { prompt_tokens: 12, completion_tokens: 3 } }, raw, t)).toEqual({ line: raw });
    expect(usageCheckedLine({ type: "done", id: "rl_1", usage: null }, "as sent", t)).toEqual({ line: "as sent" });
    const chunk = { type: "chunk" as const, id: "rl_1", data: { object: "chat.completion.chunk" as const, choices: [] } };
    expect(usageCheckedLine(chunk, "as sent", t)).toEqual({ line: "as sent" });
  });

  it("rebuilt with Switchyard's count where it is out of bounds (the rest of the message kept), and a notice for the page", () => {
    const t = answered(body, ["Hello", " there"]);
    const data = { object: "chat.completion.chunk" as const, choices: [], usage: { prompt_tokens: 12, completion_tokens: 1e9 } };
    const r = usageCheckedLine({ type: "chunk", id: "rl_1", data }, "raw", t);
    expect(JSON.parse(r.line)).toEqual({ type: "chunk", id: "rl_1", data: { object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } } });
    expect(r.notice).toBe("usage.completion_tokens is more than the request can have used (at most 16). Switchyard counted this request itself (12 prompt and 3 completion tokens): send web-llm's usage unchanged.");
    const done = usageCheckedLine({ type: "done", id: "rl_1", usage: { prompt_tokens: 12, completion_tokens: 1e9 } }, "raw", t);
    expect(JSON.parse(done.line)).toEqual({ type: "done", id: "rl_1", usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } });
    // The window bounds the counts too.
    expect(usageCheckedLine({ type: "done", id: "rl_1", usage: { prompt_tokens: 12, completion_tokens: 3 } }, "raw", t, 8).notice).toContain("usage.prompt_tokens");
  });
});

describe("the Worker's own guard", () => {
  it("a count that is not a non-negative integer is 0, never NaN", () => {
    expect([tokenCount("abc"), tokenCount(-1), tokenCount(1.5), tokenCount(Number.NaN), tokenCount(7)]).toEqual([0, 0, 0, 0, 7]);
    const events = normalizeWebLlmChunk({ choices: [], usage: { prompt_tokens: "abc" as unknown as number, completion_tokens: 4 } }, "browser:x");
    expect(events).toEqual([{ type: "usage", usage: { promptTokens: 0, completionTokens: 4 } }]);
  });
});
