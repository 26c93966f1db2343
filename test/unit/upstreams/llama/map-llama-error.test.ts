import { describe, expect, it } from "vitest";
import { mapLlamaError } from "../../../../src/upstreams/llama/map-llama-error.ts";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";
import { parseContextLengthMessage } from "../../../../src/errors/context-length.ts";
import { anthropicErrorBody } from "../../../../src/api/messages/anthropic-error.ts";
import contextExceeded from "../../../fixtures/llama/error-context-exceeded.body.json";
import harmonyUnparsed from "../../../fixtures/llama/harmony-unparsed-500.body.json";

const up = "llama:127.0.0.1:8080";
const body = (error: object) => JSON.stringify({ error });

describe("mapLlamaError", () => {
  it("the chat parser refusing the model's output (harmony-unparsed-500): 502, retryable, unparsed, the format named; other 500s are not unparsed", () => {
    const e = mapLlamaError(500, JSON.stringify(harmonyUnparsed), "application/json; charset=utf-8", up);
    expect([e.status, e.code, e.retryable, e.unparsed]).toEqual([502, "upstream_error", true, true]);
    expect(e.message).toContain("peg-native format");
    expect(e.toInfo()).toMatchObject({ unparsed: true });
    expect(ProxyError.fromInfo(e.toInfo()).unparsed).toBe(true);
    const other = mapLlamaError(500, body({ code: 500, message: "Invalid diff: now finding less tool calls!", type: "server_error" }), "application/json", up);
    expect([other.status, other.unparsed]).toEqual([502, false]);
    expect(other.toInfo()).not.toHaveProperty("unparsed");
  });
  it("maps loading to 503 model_loading with Retry-After, retryable", () => {
    const e = mapLlamaError(503, body({ message: "Loading model", type: "unavailable_error", code: 503 }), "application/json", up);
    expect([e.status, e.code, e.retryable, e.retryAfter !== undefined]).toEqual([503, "model_loading", true, true]);
  });
  it("maps context overflow to 400 context_length_exceeded, retryable (a target with a larger context may take it)", () => {
    const e = mapLlamaError(400, body({ code: 400, message: "request (3030 tokens) exceeds the available context size (1024 tokens), try increasing it", type: "exceed_context_size_error", n_prompt_tokens: 3030, n_ctx: 1024 }), "application/json", up);
    expect([e.status, e.code, e.retryable]).toEqual([400, "context_length_exceeded", true]);
  });
  it("error-context-exceeded: OpenAI's wording (clients' auto-compaction matches it), and Anthropic's on /v1/messages", () => {
    const e = mapLlamaError(400, JSON.stringify(contextExceeded), "application/json; charset=utf-8", up);
    expect([e.status, e.code, e.type, e.param]).toEqual([400, "context_length_exceeded", "invalid_request_error", "messages"]);
    expect(e.message).toBe("This model's maximum context length is 256 tokens. However, your messages resulted in 631 tokens. Please reduce the length of the messages.");
    expect(parseContextLengthMessage(e.message)).toEqual({ promptTokens: 631, contextTokens: 256 });
    expect(anthropicErrorBody(e.toInfo())).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "prompt is too long: 631 tokens > 256 maximum", code: "context_length_exceeded" },
      request_id: null,
    });
  });
  it("context overflow without n_prompt_tokens/n_ctx: the counts from the message, else the message kept", () => {
    const counted = mapLlamaError(400, body({ message: "request (900 tokens) exceeds the available context size (512 tokens), try increasing it" }), "application/json", up);
    expect(counted.message).toContain("maximum context length is 512 tokens. However, your messages resulted in 900 tokens.");
    const bare = mapLlamaError(500, body({ message: "the prompt exceeds the available context size" }), "application/json", up);
    expect([bare.status, bare.code]).toEqual([400, "context_length_exceeded"]);
    expect(bare.message).toContain("exceeds the available context size");
    expect(anthropicErrorBody(bare.toInfo()).error.message).toMatch(/^prompt is too long: /);
  });
  it("treats llama-server's client mistakes reported as 500 as 400s without failover", () => {
    for (const message of ["[json.exception.parse_error.101] parse error at line 1, column 2", "Failed to parse messages: Missing tool call type", "Unknown reasoning format", "Cannot use both json_schema and grammar"]) {
      const e = mapLlamaError(500, body({ code: 500, message, type: "server_error" }), "application/json", up);
      expect([e.status, e.retryable]).toEqual([400, false]);
    }
  });
  it("treats other 500s as upstream failures (502, retryable)", () => {
    const e = mapLlamaError(500, body({ code: 500, message: "CUDA error: out of memory", type: "server_error" }), "application/json", up);
    expect([e.status, e.code, e.retryable]).toEqual([502, "upstream_error", true]);
  });
  it("turns a non-JSON error page into an envelope naming the upstream", () => {
    const e = mapLlamaError(500, "<html>boom</html>", "text/html", up);
    expect([e.status, e.code]).toEqual([502, "upstream_error"]);
    expect(e.message).toContain(up);
    expect(e.message).toContain("text/html");
  });
  it("reports the proxy's own rejected upstream key as 502 without any key in the message", () => {
    const e = mapLlamaError(401, body({ message: "Invalid API Key", type: "authentication_error", code: 401 }), "application/json", up);
    expect([e.status, e.code, e.retryable]).toEqual([502, "upstream_error", true]);
    expect(e.message).toContain("apiKeySecret");
  });
  it("passes other 4xx through as invalid requests", () => {
    const e = mapLlamaError(400, body({ code: 400, message: "Invalid tool_choice: bogus", type: "invalid_request_error" }), "application/json", up);
    expect([e.status, e.type, e.retryable]).toEqual([400, "invalid_request_error", false]);
    expect(e.message).toContain("Invalid tool_choice: bogus");
  });
});

import routerLoadFailed from "../../../fixtures/llama-router/load-failed-500.body.json";
import routerEvicting from "../../../fixtures/llama-router/evicting-proxy-error-500.body.json";
import routerModelLimit from "../../../fixtures/llama-router/model-limit-500.body.json";
import { classifyFailure, countsAgainstUpstream } from "../../../../src/health/classify-failure.ts";

describe("mapLlamaError: router mode", () => {
  it("a model that failed to load (load-failed-500): 502 model_load_failed naming it, not retried", () => {
    const e = mapLlamaError(500, JSON.stringify(routerLoadFailed), "application/json; charset=utf-8", up);
    expect([e.status, e.code, e.retryable]).toEqual([502, "model_load_failed", false]);
    expect(e.message).toContain('"broken" failed to load on llama:127.0.0.1:8080');
  });
  it("the model being evicted as the request arrived (evicting-proxy-error-500): 502 upstream_error, retryable", () => {
    const e = mapLlamaError(500, JSON.stringify(routerEvicting), "application/json", up);
    expect([e.status, e.code, e.retryable]).toEqual([502, "upstream_error", true]);
    expect(e.message).toContain("switching models");
  });
  it("a load refused while another is under way at --models-max (model-limit-500): busy, not broken: 503 no_capacity, retryable, not held against its health", () => {
    const e = mapLlamaError(500, JSON.stringify(routerModelLimit), "application/json", up);
    expect([e.status, e.code, e.retryable, e.busy, e.retryAfter]).toEqual([503, "no_capacity", true, true, 1]);
    expect(e.message).toContain("loading another model");
    const kind = classifyFailure(e, 500);
    expect(kind).toBe("busy");
    expect(countsAgainstUpstream(kind)).toBe(false);
  });
});
