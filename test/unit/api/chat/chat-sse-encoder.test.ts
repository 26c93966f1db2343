import { describe, expect, it } from "vitest";
import { ChunkEncoder } from "../../../../src/api/chat/chunk-encoder.ts";
import type { UpstreamEvent } from "../../../../src/events/events.ts";
import { ByteQueue } from "../../../../src/responders/byte-queue.ts";
import { chatSseEncoder } from "../../../../src/api/chat/chat-sse-encoder.ts";
import type { SseEncoder } from "../../../../src/responders/sse-response.ts";

const meta = { id: "chatcmpl-abc", created: 1700000000, model: 'my "model" é', includeUsage: true };
const ext = () => ({ target: "llama:h:1", attempts: 1 });

/** What the SSE text must be: every chunk object the ChunkEncoder builds, JSON.stringify'd. */
function reference(events: UpstreamEvent[]): string {
  const enc = new ChunkEncoder(meta, ext);
  const frames = [...events.flatMap((e) => enc.encode(e)), ...enc.end()];
  return frames.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
}

/** The SSE text `sse` writes for `events` (and its end, when `end`). */
function written(sse: SseEncoder, events: UpstreamEvent[], end: boolean): string {
  const q = new ByteQueue();
  let out = "";
  const decoder = new TextDecoder();
  for (const e of events) {
    sse.encode(e, q);
    out += decoder.decode(q.take() ?? new Uint8Array(0));
  }
  if (end) sse.end(q);
  return out + decoder.decode(q.take() ?? new Uint8Array(0));
}

describe("chatSseEncoder", () => {
  it("writes plain deltas byte for byte as the chunk objects would serialise (quotes, newlines, non-ASCII, lone surrogates)", () => {
    const events: UpstreamEvent[] = [
      { type: "reasoning", delta: "think \"hard\"\n" },
      { type: "reasoning", delta: "more\u2028" },
      { type: "text", delta: "Hel" },
      { type: "text", delta: "lo \\ wörld 👋 \ud800" },
      { type: "toolCall", index: 0, id: "call_1", name: "get_weather", argumentsDelta: "" },
      { type: "toolCall", index: 0, argumentsDelta: '{"city":' },
      { type: "toolCall", index: 0, argumentsDelta: '"Paris"}' },
      { type: "text", delta: "after the call" },
      { type: "toolCall", index: 1, id: "call_2", name: "pending", argumentsDelta: "{}" },
      { type: "text", delta: "flushes the pending call first" },
      { type: "finish", reason: "tool_calls" },
      { type: "text", delta: "ignored after finish? no: held finish waits for usage" },
      { type: "usage", usage: { promptTokens: 3, completionTokens: 5 } },
      { type: "text", delta: "after the end" },
    ];
    const sse = chatSseEncoder(new ChunkEncoder(meta, ext));
    const out = written(sse, events, true);
    expect(out).toBe(reference(events));
  });

  it("writes a delta with logprobs as its chunk object (logprobs.content), not as a plain delta", () => {
    const lp = (token: string) => [{ id: 1, token, bytes: [...new TextEncoder().encode(token)], logprob: -0.5, top_logprobs: [{ id: 2, token: "x", bytes: [120], logprob: -1 }] }];
    const events: UpstreamEvent[] = [
      { type: "text", delta: "Hel", logprobs: lp("Hel") },
      { type: "text", delta: "lo", logprobs: lp("lo") },
      { type: "text", delta: " plain" },
      { type: "finish", reason: "stop" },
    ];
    const out = written(chatSseEncoder(new ChunkEncoder(meta, ext)), events, true);
    expect(out).toBe(reference(events));
    const frames = out.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)));
    expect(frames[1].choices[0].logprobs).toEqual({ content: lp("lo"), refusal: null });
    expect(frames[2].choices[0].logprobs).toBeNull();
  });

  it("stops after an error frame like the object path", () => {
    const events: UpstreamEvent[] = [
      { type: "text", delta: "a" },
      { type: "error", error: { status: 502, type: "upstream_error", code: "upstream_error", message: "broke" } },
      { type: "text", delta: "b" },
    ];
    const sse = chatSseEncoder(new ChunkEncoder(meta, ext));
    const out = written(sse, events, false);
    expect(sse.failed).toBe(true);
    const enc = new ChunkEncoder(meta, ext);
    expect(out).toBe(events.flatMap((e) => enc.encode(e)).map((c) => `data: ${JSON.stringify(c)}\n\n`).join(""));
  });
});
