import { describe, expect, it } from "vitest";
import { absorbJsonBody, emptyFacts, parseOutcomesHeader } from "../../../src/observability/answer-facts.ts";
import { CompletionAggregator } from "../../../src/api/chat/completion-aggregator.ts";
import { ResponseEncoder } from "../../../src/api/responses/response-encoder.ts";
import { errorEnvelope, outcomesHeader } from "../../../src/errors/error-envelope.ts";
import { anthropicErrorBody } from "../../../src/api/messages/anthropic-error.ts";
import { ProxyError } from "../../../src/errors/proxy-error.ts";
import type { UpstreamEvent } from "../../../src/events/events.ts";

// What the request log reads back from a body when no run told it (an error answered before a run
// started), against the bodies the real encoders write: whatever went in must come out.

const ext = () => ({ target: "llama:10.0.0.1:8080", attempts: 2, timings: { first_event_ms: 12, total_ms: 40 } });
const usage = { promptTokens: 17, completionTokens: 5, cachedTokens: 4 };
const answer: UpstreamEvent[] = [
  { type: "text", delta: "Hello " },
  { type: "toolCall", index: 0, id: "call_1", name: "get_weather", argumentsDelta: '{"city":"Paris"}' },
  { type: "finish", reason: "tool_calls" },
  { type: "usage", usage },
];

describe("facts from a body", () => {
  it("an error envelope in OpenAI's shape and in Anthropic's: its code", () => {
    const e = new ProxyError({ status: 404, code: "model_not_found", message: "no such model" });
    const f = emptyFacts();
    absorbJsonBody(f, JSON.stringify(errorEnvelope(e)));
    expect(f.error).toBe("model_not_found");
    const a = emptyFacts();
    absorbJsonBody(a, JSON.stringify(anthropicErrorBody(e)));
    expect(a.error).toBe("model_not_found");
  });

  it("chat non-stream body (after whitespace heartbeats)", () => {
    const agg = new CompletionAggregator();
    for (const e of answer) agg.push(e);
    const body = agg.result({ id: "chatcmpl-1", created: 1, model: "qwen", includeUsage: false }, ext);
    const f = emptyFacts();
    absorbJsonBody(f, `   ${JSON.stringify(body)}`);
    expect(f).toMatchObject({ model: "qwen", promptTokens: 17, completionTokens: 5, finishReasons: ["tool_calls"], extension: ext() });
  });

  it("a Responses body: usage and status", () => {
    const enc = new ResponseEncoder({ id: "resp_1", createdAt: 1, model: "gpt-ish", echo: {} }, ext);
    for (const e of answer) enc.encode(e);
    enc.end();
    const b = emptyFacts();
    absorbJsonBody(b, JSON.stringify(enc.response()));
    expect(b).toMatchObject({ promptTokens: 17, completionTokens: 5, finishReasons: ["completed"] });
  });

  it("what is not JSON tells nothing", () => {
    const f = emptyFacts();
    absorbJsonBody(f, "<html>502</html>");
    expect(f).toEqual(emptyFacts());
  });

  it("the outcomes header read back as written", () => {
    const outcomes = [
      { target: "llama:10.0.0.1:8080", code: "upstream_unreachable", status: 502 },
      { target: "browser:Qwen 2.5; q4", code: "no_capacity", status: 503 },
    ];
    expect(parseOutcomesHeader(outcomesHeader(outcomes))).toEqual(outcomes.map(({ target, code }) => ({ target, code })));
  });
});
