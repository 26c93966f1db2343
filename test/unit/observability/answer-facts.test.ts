import { describe, expect, it } from "vitest";
import { absorbJsonBody, absorbSse, absorbStreamEnds, emptyFacts, parseOutcomesHeader } from "../../../src/observability/answer-facts.ts";
import { carriesData } from "../../../src/observability/body-tap.ts";
import { assembleStream } from "../../../src/observability/capture.ts";
import { ChunkEncoder } from "../../../src/api/chat/chunk-encoder.ts";
import { CompletionAggregator } from "../../../src/api/chat/completion-aggregator.ts";
import { MessageEncoder } from "../../../src/api/messages/message-encoder.ts";
import { ResponseEncoder } from "../../../src/api/responses/response-encoder.ts";
import { TextCompletionEncoder } from "../../../src/api/completions/text-completion-encoder.ts";
import { dataFrame, namedFrame } from "../../../src/responders/event-encoder.ts";
import { outcomesHeader } from "../../../src/errors/error-envelope.ts";
import type { UpstreamEvent } from "../../../src/events/events.ts";

// The facts the request log reads back from an answer, against the frames and bodies the real
// encoders write (src/api/…): whatever usage, finish and error went in must come out.

const ext = () => ({ target: "llama:10.0.0.1:8080", attempts: 2, timings: { first_event_ms: 12, total_ms: 40 } });
const usage = { promptTokens: 17, completionTokens: 5, cachedTokens: 4 };
const answer: UpstreamEvent[] = [
  { type: "text", delta: "Hello " },
  { type: "text", delta: "world" },
  { type: "toolCall", index: 0, id: "call_1", name: "get_weather", argumentsDelta: '{"city":' },
  { type: "toolCall", index: 0, argumentsDelta: '"Paris"}' },
  { type: "finish", reason: "tool_calls" },
  { type: "usage", usage },
];
const failed: UpstreamEvent[] = [
  { type: "text", delta: "Half" },
  { type: "error", error: { status: 502, type: "server_error", code: "upstream_error", message: "cut" } },
];

function chatStream(events: UpstreamEvent[], includeUsage = true): string {
  const enc = new ChunkEncoder({ id: "chatcmpl-1", created: 1, model: "qwen", includeUsage }, ext);
  const frames = events.flatMap((e) => enc.encode(e));
  frames.push(...enc.end());
  return frames.map(dataFrame).join("") + (enc.failed ? "" : "data: [DONE]\n\n");
}

describe("answer facts from each API's wire format", () => {
  it("chat stream: model, usage, finish, x_switchyard", () => {
    const f = emptyFacts();
    absorbSse(f, chatStream(answer));
    expect(f).toMatchObject({ model: "qwen", promptTokens: 17, completionTokens: 5, finishReasons: ["tool_calls"], extension: ext() });
    expect(f.error).toBeUndefined();
  });

  it("chat stream without include_usage: no usage is invented", () => {
    const f = emptyFacts();
    absorbSse(f, chatStream(answer, false));
    expect(f.promptTokens).toBeUndefined();
    expect(f.finishReasons).toEqual(["tool_calls"]);
  });

  it("chat stream ending in an error frame: its code", () => {
    const f = emptyFacts();
    absorbSse(f, chatStream(failed));
    expect(f.error).toBe("upstream_error");
  });

  it("a tail cut mid-frame, and a head cut mid-frame, read only their whole frames", () => {
    const text = chatStream(answer);
    const f = emptyFacts();
    absorbSse(f, text.slice(40), true);
    expect(f).toMatchObject({ promptTokens: 17, finishReasons: ["tool_calls"] });
    const h = emptyFacts();
    absorbSse(h, text.slice(0, text.indexOf("\n\n") + 30), false, true);
    expect(h.model).toBe("qwen");
    expect(h.promptTokens).toBeUndefined();
  });

  it("chat non-stream body (after whitespace heartbeats)", () => {
    const agg = new CompletionAggregator();
    for (const e of answer) agg.push(e);
    const body = agg.result({ id: "chatcmpl-1", created: 1, model: "qwen", includeUsage: false }, ext);
    const f = emptyFacts();
    absorbJsonBody(f, `   ${JSON.stringify(body)}`);
    expect(f).toMatchObject({ model: "qwen", promptTokens: 17, completionTokens: 5, finishReasons: ["tool_calls"], extension: ext() });
  });

  it("Messages stream: input tokens with the cached ones, output tokens, stop reason; its error event", () => {
    const enc = new MessageEncoder({ id: "msg_1", model: "claude-ish" }, ext);
    const frames = answer.flatMap((e) => enc.encode(e));
    frames.push(...enc.end());
    const f = emptyFacts();
    absorbSse(f, frames.map(namedFrame).join(""));
    expect(f).toMatchObject({ model: "claude-ish", promptTokens: 17, completionTokens: 5, finishReasons: ["tool_use"] });
    const bad = new MessageEncoder({ id: "msg_2", model: "claude-ish" }, ext);
    const g = emptyFacts();
    absorbSse(g, failed.flatMap((e) => bad.encode(e)).map(namedFrame).join(""));
    expect(g.error).toBe("upstream_error");
  });

  it("Responses stream and body: usage, status, x_switchyard; a failed response's code", () => {
    const enc = new ResponseEncoder({ id: "resp_1", createdAt: 1, model: "gpt-ish", echo: {} }, ext);
    const frames = answer.flatMap((e) => enc.encode(e));
    frames.push(...enc.end());
    const f = emptyFacts();
    absorbSse(f, frames.map(namedFrame).join(""));
    expect(f).toMatchObject({ model: "gpt-ish", promptTokens: 17, completionTokens: 5, finishReasons: ["completed"], extension: ext() });
    const b = emptyFacts();
    absorbJsonBody(b, JSON.stringify(enc.response()));
    expect(b).toMatchObject({ promptTokens: 17, completionTokens: 5, finishReasons: ["completed"] });
    const bad = new ResponseEncoder({ id: "resp_2", createdAt: 1, model: "gpt-ish", echo: {} }, ext);
    const g = emptyFacts();
    absorbSse(g, failed.flatMap((e) => bad.encode(e)).map(namedFrame).join(""));
    expect(g.error).toBe("upstream_error");
  });

  it("text completions stream", () => {
    const enc = new TextCompletionEncoder({ id: "cmpl-1", created: 1, model: "base", includeUsage: true }, ext);
    const events: UpstreamEvent[] = [{ type: "text", delta: "abc" }, { type: "finish", reason: "length" }, { type: "usage", usage }];
    const frames = events.flatMap((e) => enc.encode(e));
    frames.push(...enc.end());
    const f = emptyFacts();
    absorbSse(f, frames.map(dataFrame).join(""));
    expect(f).toMatchObject({ model: "base", promptTokens: 17, completionTokens: 5, finishReasons: ["length"] });
  });

  it("a stream's ends only: its first frame and its last ones, heartbeats before them skipped", () => {
    const long: UpstreamEvent[] = [...Array.from({ length: 400 }, (_, i): UpstreamEvent => ({ type: "text", delta: `piece ${i} ` })), ...answer];
    const msg = new MessageEncoder({ id: "msg_1", model: "claude-ish" }, ext);
    const text = ": keep-alive\n\n" + [...long.flatMap((e) => msg.encode(e)), ...msg.end()].map(namedFrame).join("");
    // As the tap keeps it: the first 1,000 bytes and the last 2,000, each cut mid-frame.
    const f = emptyFacts();
    absorbStreamEnds(f, text.slice(0, 1000), text.slice(-2000), false);
    expect(f).toMatchObject({ model: "claude-ish", promptTokens: 17, completionTokens: 5, finishReasons: ["tool_use"] });
    const whole = emptyFacts();
    absorbStreamEnds(whole, chatStream(failed), chatStream(failed), true);
    expect(whole.error).toBe("upstream_error");
  });

  it("heartbeats carry no data; frames do", () => {
    const bytes = (s: string) => new TextEncoder().encode(s);
    expect(carriesData(bytes(": keep-alive\n\n"))).toBe(false);
    expect(carriesData(bytes("   "))).toBe(false);
    expect(carriesData(bytes(": keep-alive\n\ndata: {}\n\n"))).toBe(true);
    expect(carriesData(bytes(' {"id":1}'))).toBe(true);
  });

  it("the outcomes header read back as written", () => {
    const outcomes = [
      { target: "llama:10.0.0.1:8080", code: "upstream_unreachable", status: 502 },
      { target: "browser:Qwen 2.5; q4", code: "no_capacity", status: 503 },
    ];
    expect(parseOutcomesHeader(outcomesHeader(outcomes))).toEqual(outcomes.map(({ target, code }) => ({ target, code })));
  });
});

describe("a stream's answer assembled for capture", () => {
  it("chat, Messages and Responses give the same text and tool call", () => {
    const chat = assembleStream(chatStream(answer));
    const msg = new MessageEncoder({ id: "msg_1", model: "m" }, ext);
    const messages = assembleStream([...answer.flatMap((e) => msg.encode(e)), ...msg.end()].map(namedFrame).join(""));
    const res = new ResponseEncoder({ id: "resp_1", createdAt: 1, model: "m", echo: {} }, ext);
    const responses = assembleStream([...answer.flatMap((e) => res.encode(e)), ...res.end()].map(namedFrame).join(""));
    for (const a of [chat, messages, responses]) {
      expect(a.text).toBe("Hello world");
      expect(a.tool_calls).toEqual([{ name: "get_weather", arguments: '{"city":"Paris"}' }]);
    }
  });
});
