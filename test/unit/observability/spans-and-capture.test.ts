import { describe, expect, it } from "vitest";
import { boundedText, capturedFor, TRUNCATED_MARKER } from "../../../src/observability/capture.ts";
import { estimatedAttempts, operationOf, requestSpans as madeSpans, serverOf, spanJson, type OtlpSpan } from "../../../src/observability/otlp-spans.ts";
import { SpanBatch } from "../../../src/observability/span-batch.ts";
import { recordOf, type DetailedRecord } from "../../../src/observability/request-record.ts";
import { RequestTrace } from "../../../src/observability/request-trace.ts";
import { formatTraceParent, parseTraceParent } from "../../../src/observability/trace-context.ts";
import { emptyFacts } from "../../../src/observability/answer-facts.ts";

/** The request's spans as their OTLP/JSON text reads back (what a collector receives). */
const requestSpans = (...args: Parameters<typeof madeSpans>): OtlpSpan[] => madeSpans(...args).map((s) => JSON.parse(spanJson(s)) as OtlpSpan);

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value as Record<string, unknown> | undefined;
  if (!v) return undefined;
  if ("intValue" in v) return Number(v.intValue);
  if ("arrayValue" in v) return (v.arrayValue as { values: Array<{ stringValue: string }> }).values.map((x) => x.stringValue);
  return Object.values(v)[0];
};

function record(over: Partial<DetailedRecord> = {}): DetailedRecord {
  const base = recordOf({
    id: "req_1",
    arrivedAt: 1_000_000,
    key: { id: "key_abcdefghijkl", name: "alice" },
    endpoint: "/v1/chat/completions",
    model: "qwen",
    stream: true,
    status: 200,
    target: "llama:10.0.0.2:8080",
    attempts: 2,
    outcomes: [],
    sse: true,
    firstTokenAt: 1_000_300,
    endedAt: 1_001_000,
    cancelled: false,
  }, { ...emptyFacts(), promptTokens: 30, completionTokens: 7, finishReasons: ["stop"], extension: { target: "llama:10.0.0.2:8080", attempts: 2, timings: { first_event_ms: 50, total_ms: 400 } } });
  return { ...base, ...over };
}

describe("W3C traceparent", () => {
  it("reads a valid header and refuses the invalid ones", () => {
    const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    expect(parseTraceParent(tp)).toEqual({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: true });
    expect(parseTraceParent(formatTraceParent("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", false))?.sampled).toBe(false);
    for (const bad of ["", "garbage", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", `${tp}-extra`]) {
      expect(parseTraceParent(bad)).toBeNull();
    }
    // A later version is read by its first four fields.
    expect(parseTraceParent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more")?.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });

  it("a request's trace continues the client's, and each attempt's traceparent names its own span", () => {
    const t = new RequestTrace(parseTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    expect(t.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(t.parentSpanId).toBe("00f067aa0ba902b7");
    const a = t.attemptStarted("llama:10.0.0.1:8080", "http://10.0.0.1:8080");
    a.ended("upstream_unreachable");
    const sent = parseTraceParent(a.traceparent)!;
    expect(sent.traceId).toBe(t.traceId);
    expect(sent.spanId).toBe(t.attempts[0]!.spanId);
    expect(t.attempts[0]!.outcome).toBe("upstream_unreachable");
  });
});

describe("spans with the GenAI semantic conventions", () => {
  it("one SERVER span named after the operation and model, with usage and finish reasons", () => {
    const r = record();
    const [server, ...children] = requestSpans(r, { traceId: "a".repeat(32), spanId: "b".repeat(16), parentSpanId: "c".repeat(16) }, 1_000_000, []);
    expect(server).toMatchObject({ name: "chat qwen", kind: 2, traceId: "a".repeat(32), spanId: "b".repeat(16), parentSpanId: "c".repeat(16), status: { code: 0 } });
    expect(server!.startTimeUnixNano).toBe("1000000000000");
    expect(server!.endTimeUnixNano).toBe("1001000000000");
    expect(attr(server!, "gen_ai.operation.name")).toBe("chat");
    expect(attr(server!, "gen_ai.request.model")).toBe("qwen");
    expect(attr(server!, "gen_ai.usage.input_tokens")).toBe(r.prompt_tokens);
    expect(attr(server!, "gen_ai.usage.output_tokens")).toBe(r.completion_tokens);
    expect(attr(server!, "gen_ai.response.finish_reasons")).toEqual(["stop"]);
    expect(attr(server!, "http.response.status_code")).toBe(200);
    // Without routing's report: one CLIENT span per attempt counted, the answering one last.
    expect(children).toHaveLength(2);
    expect(children.every((c) => c.kind === 3 && c.parentSpanId === "b".repeat(16))).toBe(true);
    expect(attr(children[1]!, "server.address")).toBe("10.0.0.2");
    expect(attr(children[1]!, "server.port")).toBe(8080);
  });

  it("a 5xx is an ERROR span; a 4xx is not; each failed target its own ERROR child", () => {
    const outcomes = [
      { target: "llama:10.0.0.1:8080", code: "upstream_unreachable" },
      { target: "openai:gpu.example:443", code: "upstream_timeout" },
    ];
    const r = record({ status: 502, error: "upstream_unreachable", target: null, attempts: 2, outcomes, timings: null });
    const [server, ...children] = requestSpans(r, { traceId: "a".repeat(32), spanId: "b".repeat(16) }, 1_000_000, []);
    expect(server!.status.code).toBe(2);
    expect(children.map((c) => attr(c, "server.address"))).toEqual(["10.0.0.1", "gpu.example"]);
    expect(children.map((c) => attr(c, "error.type"))).toEqual(["upstream_unreachable", "upstream_timeout"]);
    expect(children.every((c) => c.status.code === 2)).toBe(true);
    expect(requestSpans(record({ status: 400, error: "invalid_type" }), { traceId: "a".repeat(32), spanId: "b".repeat(16) }, 0, [])[0]!.status.code).toBe(0);
    expect(requestSpans(record({ status: 200, error: "upstream_error" }), { traceId: "a".repeat(32), spanId: "b".repeat(16) }, 0, [])[0]!.status.code).toBe(2);
  });

  it("routing's reported attempts are used as they are", () => {
    const t = new RequestTrace(null);
    t.attemptStarted("llama:10.0.0.1:8080", "http://10.0.0.1:8080").ended("upstream_error");
    t.attemptStarted("llama:10.0.0.2:8080", "http://10.0.0.2:8080").ended("ok");
    const spans = requestSpans(record(), { traceId: t.traceId, spanId: t.spanId }, 1_000_000, t.attempts);
    expect(spans.slice(1).map((s) => s.spanId)).toEqual(t.attempts.map((a) => a.spanId));
    expect(spans.slice(1).map((s) => attr(s, "switchyard.attempt.estimated"))).toEqual([undefined, undefined]);
  });

  it("estimated attempts: as many as counted, within the request", () => {
    const r = record({ attempts: 3 });
    const a = estimatedAttempts(r, 1_000_000, 1_001_000);
    expect(a).toHaveLength(3);
    expect(a.at(-1)).toMatchObject({ target: "llama:10.0.0.2:8080", outcome: "ok", startedAt: 1_000_600, endedAt: 1_001_000 });
    expect(a.every((s) => s.startedAt >= 1_000_000 && (s.endedAt ?? 0) <= 1_001_000)).toBe(true);
  });

  it("operations and servers", () => {
    expect(["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses", "/v1/messages"].map(operationOf)).toEqual(["chat", "text_completion", "embeddings", "chat", "chat"]);
    expect(serverOf("openai:api.example.com")).toEqual({ address: "api.example.com", port: 80 });
    expect(serverOf("browser:Qwen")).toBeNull();
    expect(serverOf("x", "https://[::1]:9000/v1")).toEqual({ address: "::1", port: 9000 });
  });

  it("a span's text is the OTLP/JSON of its values, whatever they hold", () => {
    const text = spanJson({
      traceId: "a".repeat(32),
      spanId: "b".repeat(16),
      name: 'chat "q\\wen"\n\u2028é',
      kind: 2,
      startMs: 1.6,
      endMs: 3,
      attributes: { s: 'x"y\u0000', i: 42, d: 0.25, inf: Infinity, b: false, arr: ["a", '"b"'], none: null, gone: undefined },
      status: { code: 2, message: "bad \"thing\"" },
    });
    expect(JSON.parse(text)).toEqual({
      traceId: "a".repeat(32),
      spanId: "b".repeat(16),
      name: 'chat "q\\wen"\n\u2028é',
      kind: 2,
      startTimeUnixNano: "2000000",
      endTimeUnixNano: "3000000",
      attributes: [
        { key: "s", value: { stringValue: 'x"y\u0000' } },
        { key: "i", value: { intValue: "42" } },
        { key: "d", value: { doubleValue: 0.25 } },
        { key: "inf", value: { stringValue: "Infinity" } },
        { key: "b", value: { boolValue: false } },
        { key: "arr", value: { arrayValue: { values: [{ stringValue: "a" }, { stringValue: '"b"' }] } } },
      ],
      status: { code: 2, message: 'bad "thing"' },
    });
  });

  it("the export body is OTLP/JSON's ExportTraceServiceRequest", () => {
    const batch = new SpanBatch(1 << 20);
    for (const s of madeSpans(record(), { traceId: "a".repeat(32), spanId: "b".repeat(16) }, 0, [])) batch.add(spanJson(s));
    const body = JSON.parse(new TextDecoder().decode(batch.body())) as { resourceSpans: Array<{ resource: { attributes: unknown[] }; scopeSpans: Array<{ spans: unknown[] }> }> };
    expect(body.resourceSpans[0]!.resource.attributes).toContainEqual({ key: "service.name", value: { stringValue: "switchyard" } });
    expect(body.resourceSpans[0]!.scopeSpans[0]!.spans).toHaveLength(3);
  });
});

describe("capture bounds and redaction", () => {
  it("every secret is taken out, longest first", () => {
    const out = boundedText('{"note":"adm-secret-123456 and sk-upstream-abcdef and sk-upstream-abcdef-longer"}', ["adm-secret-123456", "sk-upstream-abcdef", "sk-upstream-abcdef-longer"], 10_000);
    expect(out.text).not.toMatch(/adm-secret|sk-upstream/);
    expect(out.text.match(/\[redacted\]/g)).toHaveLength(3);
    expect(out.truncated).toBe(false);
  });

  it("a part over the bound is cut with the marker, within the bound, never mid-character", () => {
    const text = "é".repeat(5000);
    const out = boundedText(text, [], 1024);
    expect(out.truncated).toBe(true);
    expect(out.text.endsWith(TRUNCATED_MARKER)).toBe(true);
    expect(new TextEncoder().encode(out.text).length).toBeLessThanOrEqual(1024);
    expect(out.text).not.toContain("\uFFFD");
  });

  it("a request is captured while the log is on, for the deployment or for its key", () => {
    const on = { capture: true };
    const off = { capture: false };
    expect(capturedFor({ log: true, capture: true }, undefined)).toBe(true);
    expect(capturedFor({ log: true, capture: true }, off)).toBe(true);
    expect(capturedFor({ log: true, capture: false }, on)).toBe(true);
    expect(capturedFor({ log: true, capture: false }, off)).toBe(false);
    expect(capturedFor({ log: true, capture: false }, undefined)).toBe(false);
    expect(capturedFor({ log: false, capture: true }, on)).toBe(false);
    expect(capturedFor({ log: false, capture: false }, on)).toBe(false);
  });
});
