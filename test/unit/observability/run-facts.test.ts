import { describe, expect, it } from "vitest";
import { RunFacts } from "../../../src/observability/run-facts.ts";
import type { EventPull } from "../../../src/events/event-source.ts";
import type { UpstreamEvent } from "../../../src/events/events.ts";
import { ProxyError } from "../../../src/errors/proxy-error.ts";
import { jsonResponse } from "../../../src/responders/json-response.ts";
import { sseResponse } from "../../../src/responders/sse-response.ts";
import { Deadlines } from "../../../src/lib/deadlines.ts";
import { ChunkEncoder } from "../../../src/api/chat/chunk-encoder.ts";
import { chatSseEncoder } from "../../../src/api/chat/chat-sse-encoder.ts";
import { CompletionAggregator } from "../../../src/api/chat/completion-aggregator.ts";

// What the request log learns of an answer from the pipeline (src/observability/run-facts.ts): the
// responders tell it each event as they encode it and how the delivery ended.

/** A run's events as a pull source; `now`: served from nextNow after the first, like a parsed chunk. */
function pull(events: UpstreamEvent[], now = false): EventPull & { cancelled: boolean } {
  const rest = [...events];
  const p: EventPull & { cancelled: boolean } = {
    cancelled: false,
    next: async () => rest.shift() ?? null,
    cancel() {
      p.cancelled = true;
    },
  };
  if (now) p.nextNow = () => rest.shift();
  return p;
}

const ext = { target: "llama:10.0.0.1:8080", attempts: 1 };
const answer: UpstreamEvent[] = [
  { type: "reasoning", delta: "think" },
  { type: "text", delta: "Hello" },
  { type: "toolCall", index: 0, name: "get_weather", argumentsDelta: '{"city":' },
  { type: "toolCall", index: 0, argumentsDelta: '"Paris"}' },
  { type: "finish", reason: "tool_calls" },
  { type: "usage", usage: { promptTokens: 17, completionTokens: 5 } },
];
const common = (start: Promise<{ first: UpstreamEvent; events: EventPull; headers: Record<string, string> }>, observe: RunFacts) => ({
  start,
  commitMs: 1000,
  deadlines: new Deadlines(1000),
  heartbeatMs: 10_000,
  abort() {},
  waitUntil(p: Promise<unknown>) {
    void p.catch(() => {});
  },
  observe,
});
const meta = { id: "chatcmpl-1", created: 1, model: "qwen", includeUsage: true };

/** Resolves once `f`'s answer has ended. */
const ended = (f: RunFacts) => new Promise<void>((r) => f.whenEnded(r));

describe("RunFacts", () => {
  it("an answer's facts from what the responders encode, stream and not, the extension read at the end", async () => {
    for (const stream of [true, false]) {
      for (const now of [false, true]) {
        const f = new RunFacts();
        f.asked("qwen", stream);
        let extensionRead = 0;
        f.follow(() => (extensionRead++, ext));
        const [first, ...rest] = answer;
        const start = Promise.resolve({ first: first!, events: pull(rest, now), headers: {} });
        const res = stream
          ? await sseResponse({ ...common(start, f), encoder: chatSseEncoder(new ChunkEncoder(meta, () => ext)) })
          : await jsonResponse({ ...common(start, f), aggregator: new CompletionAggregator(), result: () => ({}) });
        await res.text();
        await ended(f);
        expect(extensionRead).toBe(1);
        expect(f.facts()).toEqual({ model: "qwen", promptTokens: 17, completionTokens: 5, finishReasons: ["tool_calls"], extension: ext });
        expect(f.firstTokenAt).toBeDefined();
        expect(f.endedAt! >= f.firstTokenAt!).toBe(true);
        expect(f.cancelled).toBe(false);
        expect(f.assembled()).toBeUndefined();
      }
    }
  });

  it("a run refused before its first event: its code, stream and not", async () => {
    for (const stream of [true, false]) {
      const f = new RunFacts();
      f.follow(() => ext);
      const start = Promise.reject(new ProxyError({ status: 502, code: "upstream_unreachable", message: "down" }));
      const res = stream
        ? await sseResponse({ ...common(start, f), encoder: chatSseEncoder(new ChunkEncoder(meta, () => ext)) })
        : await jsonResponse({ ...common(start, f), aggregator: new CompletionAggregator(), result: () => ({}) });
      expect(res.status).toBe(502);
      await ended(f);
      expect(f.ran).toBe(true);
      expect(f.error).toBe("upstream_unreachable");
      expect(f.firstTokenAt).toBeUndefined();
    }
  });

  it("an error event is the code the client got; a client that leaves is cancelled; only the first end counts", async () => {
    const f = new RunFacts();
    f.event({ type: "text", delta: "Half" });
    f.event({ type: "error", error: { status: 502, type: "server_error", code: "upstream_error", message: "x" } });
    f.end("done");
    f.end("client_gone");
    await ended(f);
    expect(f.error).toBe("upstream_error");
    expect(f.cancelled).toBe(false);
    const g = new RunFacts();
    g.end("client_gone");
    await ended(g);
    expect(g.cancelled).toBe(true);
  });

  it("whenEnded: its follower is told once, when the answer ends, or at once when it has", () => {
    const f = new RunFacts();
    let told = 0;
    f.whenEnded(() => told++);
    f.event({ type: "text", delta: "Hi" });
    expect(told).toBe(0);
    f.end("done");
    f.end("client_gone");
    expect(told).toBe(1);
    let late = 0;
    f.whenEnded(() => late++);
    expect(late).toBe(1);
    const g = new RunFacts();
    let answered = 0;
    g.whenEnded(() => answered++);
    g.answered({ promptTokens: 3 }, ext);
    expect(answered).toBe(1);
    expect(g.promptTokens).toBe(3);
  });

  it("capture: the answer assembled, and the model's raw text when the rewriter changed it", async () => {
    const f = new RunFacts(1000);
    const modelWrote: UpstreamEvent[] = [{ type: "text", delta: "Hello " }, { type: "text", delta: '<tool_call>{"name":"get_weather"}</tool_call>' }];
    const raw = f.rawOf({ first: modelWrote[0]!, events: pull(modelWrote.slice(1), true) });
    while (raw.events.nextNow?.() ?? (await raw.events.next())); // the rewriter reads it
    for (const e of answer) f.event(e);
    f.end("done");
    await ended(f);
    expect(f.assembled()).toEqual({ text: "Hello", reasoning: "think", tool_calls: [{ name: "get_weather", arguments: '{"city":"Paris"}' }], raw_text: 'Hello <tool_call>{"name":"get_weather"}</tool_call>' });
    expect(f.cut).toBe(false);
  });

  it("capture is bounded: each part up to the bound, and said to be cut", () => {
    const f = new RunFacts(8);
    f.event({ type: "text", delta: "0123456789" });
    f.event({ type: "text", delta: "abc" });
    expect(f.assembled()?.text).toBe("01234567");
    expect(f.cut).toBe(true);
  });

  it("capture turned on for a key once it is known: the body as its route read it, and the answer", () => {
    const f = new RunFacts(0, 8);
    expect(f.capturing).toBe(false);
    expect(f.keyCapturable).toBe(true);
    f.captureKeyed('{"model":"m","messages":[{"role":"user","content":"hi"}]}');
    expect(f.capturing).toBe(true);
    expect(f.keyCapturable).toBe(false);
    expect(f.keyedRequest).toBe('{"model":"m","messages":[{"role":"user","content":"hi"}]}');
    f.event({ type: "text", delta: "0123456789" });
    expect(f.assembled()).toEqual({ text: "01234567", reasoning: "", tool_calls: [] });
    expect(f.cut).toBe(true);
  });

  it("capture turned on for a key by a body that did not parse keeps its text as sent", () => {
    const f = new RunFacts(0, 64);
    f.captureKeyed('{"model": "m", "messages": [');
    expect(f.capturing).toBe(true);
    expect(f.keyedRequest).toBe('{"model": "m", "messages": [');
    const off = new RunFacts(0, 0);
    off.captureKeyed("{");
    expect(off.capturing).toBe(false);
    expect(off.keyedRequest).toBeUndefined();
  });

  it("a key cannot turn capture on with the log off, nor again when it is on from the start", () => {
    const off = new RunFacts(0, 0);
    expect(off.keyCapturable).toBe(false);
    off.captureKeyed('{"model":"m"}');
    expect(off.capturing).toBe(false);
    expect(off.keyedRequest).toBeUndefined();
    const everyRequest = new RunFacts(100, 100);
    expect(everyRequest.capturing).toBe(true);
    expect(everyRequest.keyCapturable).toBe(false);
    everyRequest.captureKeyed('{"model":"m"}');
    expect(everyRequest.keyedRequest).toBeUndefined();
  });

  it("the body a client sent: its model and stream flag when they are what they should be", () => {
    const f = new RunFacts();
    f.sent({ model: "m".repeat(300), stream: "yes" });
    expect(f.model).toHaveLength(256);
    expect(f.stream).toBeUndefined();
    const g = new RunFacts();
    g.sent([1, 2]);
    expect(g.model).toBeUndefined();
  });

  it("a body that sets no stream asked for none: stream false, as OpenAI reads it; so did one that is not JSON (issue 40, finding 11)", () => {
    for (const body of [{ model: "m" }, { model: "m", stream: null }, [1, 2], "text", undefined]) {
      const f = new RunFacts();
      f.sent(body);
      expect(f.stream, JSON.stringify(body)).toBe(false);
    }
    const asked = new RunFacts();
    asked.sent({ stream: true });
    expect(asked.stream).toBe(true);
  });
});
