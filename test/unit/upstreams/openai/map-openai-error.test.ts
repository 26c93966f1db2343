// OpenAI-compatible servers' error answers → the client's outcome: which fail over, which are the
// client's mistake, and what the message tells the operator.
import { describe, expect, it } from "vitest";
import { classifyFailure } from "../../../../src/health/classify-failure.ts";
import { mapOpenAiError, readErrorBody } from "../../../../src/upstreams/openai/map-openai-error.ts";
import ollamaNotFound from "../../../fixtures/openai-compatible/ollama-error-model-not-found-404.body.json";
import vllmNotFound from "../../../fixtures/openai-compatible/vllm-error-model-not-found-404.body.json";
import vllmLegacyNotFound from "../../../fixtures/openai-compatible/vllm-legacy-error-model-not-found-404.body.json";
import vllmContext from "../../../fixtures/openai-compatible/vllm-error-context-400.body.json";

const map = (status: number, body: unknown, contentType = "application/json") => mapOpenAiError(status, typeof body === "string" ? body : JSON.stringify(body), contentType, "openai:gpu-1:8000", "/chat/completions");

describe("mapOpenAiError", () => {
  it.each([
    ["Ollama", ollamaNotFound, 'model "llama9" not found'],
    ["vLLM", vllmNotFound, "The model `gpt-4o` does not exist."],
    ["older vLLM (top-level error)", vllmLegacyNotFound, "The model `gpt-4o` does not exist."],
  ])("%s 404 model not found: an upstream error that fails over (misconfigured), naming the model check", (_, body, quoted) => {
    const err = map(404, body);
    expect(err).toMatchObject({ status: 502, code: "upstream_error", retryable: true });
    expect(err.message).toContain(quoted);
    expect(err.message).toContain("GET /v1/models");
    expect(classifyFailure(err, 404)).toBe("misconfigured");
  });

  it("vLLM's context error: context_length_exceeded with OpenAI's wording and both counts, retryable elsewhere", () => {
    const err = map(400, vllmContext);
    expect(err).toMatchObject({ status: 400, code: "context_length_exceeded", param: "messages", retryable: true });
    expect(err.message).toBe("This model's maximum context length is 4096 tokens. However, your messages resulted in 4096 tokens. Please reduce the length of the messages.");
    expect(classifyFailure(err, 400)).toBe("too_long");
  });

  it("OpenAI's own code context_length_exceeded without counts keeps the server's words", () => {
    const err = map(400, { error: { message: "Too long.", type: "invalid_request_error", code: "context_length_exceeded" } });
    expect(err).toMatchObject({ code: "context_length_exceeded", retryable: true });
    expect(err.message).toContain("Too long.");
  });

  it("a 400 about the request is the client's: not retried, not a health signal", () => {
    const err = map(400, { error: { message: "temperature must be at most 2", type: "BadRequestError", code: 400 } });
    expect(err).toMatchObject({ status: 400, type: "invalid_request_error", retryable: false });
    expect(classifyFailure(err, 400)).toBe("client");
  });

  it("FastAPI's 422 {detail} becomes a 400 the client can read", () => {
    const err = map(422, { detail: [{ loc: ["body", "messages"], msg: "field required" }] });
    expect(err.status).toBe(400);
    expect(err.message).toContain("field required");
  });

  it.each([401, 403])("%i: Switchyard's credentials refused, fails over and says where to look", (status) => {
    const err = map(status, { error: { message: "Invalid API key", type: "authentication_error" } });
    expect(err).toMatchObject({ status: 502, retryable: true });
    expect(err.message).toContain("apiKeySecret and headers");
    expect(classifyFailure(err, status)).toBe("misconfigured");
  });

  it("404 without a model in it: no such endpoint, check the URL", () => {
    const err = map(404, "Not Found", "text/plain");
    expect(err).toMatchObject({ status: 502, retryable: true });
    expect(err.message).toContain("has no /chat/completions endpoint");
  });

  it("429: busy, retried after a short wait", () => {
    const err = map(429, { error: { message: "Rate limit reached for tokens per min", type: "tokens" } });
    expect(err).toMatchObject({ status: 503, code: "no_capacity", retryable: true, busy: true });
    expect(classifyFailure(err, 429)).toBe("busy");
  });

  it("503 while loading: model_loading; otherwise no_capacity", () => {
    expect(map(503, { error: { message: "Loading model" } })).toMatchObject({ code: "model_loading", retryAfter: 5 });
    expect(map(503, { error: "Model is overloaded" })).toMatchObject({ code: "no_capacity", busy: true });
  });

  it("504 from a gateway: upstream_timeout", () => {
    expect(map(504, "<html>Gateway Timeout</html>", "text/html")).toMatchObject({ status: 504, code: "upstream_timeout", retryable: true });
  });

  it("5xx, JSON or not (Portkey's `html-message` for a dead custom host): a retryable upstream error", () => {
    const portkey = map(500, { "html-message": "Message: fetch failed Cause: Error: connect ECONNREFUSED" });
    expect(portkey).toMatchObject({ status: 502, code: "upstream_error", retryable: true });
    expect(classifyFailure(portkey, 500)).toBe("broken");
    expect(map(502, "<html>Bad Gateway</html>", "text/html").message).toContain("text/html");
  });
});

describe("readErrorBody", () => {
  it.each([
    [{ error: { message: "m", type: "t", code: "c" } }, { message: "m", type: "t", code: "c" }],
    [{ error: { message: "m", type: "t", code: 404 } }, { message: "m", type: "t" }],
    [{ object: "error", message: "m", type: "NotFoundError", code: 404 }, { message: "m", type: "NotFoundError" }],
    [{ error: "Input validation error", error_type: "validation" }, { message: "Input validation error", type: "validation" }],
    [{ status: "failure", message: "Either x-portkey-config or x-portkey-provider header is required" }, { message: "Either x-portkey-config or x-portkey-provider header is required" }],
    [{ detail: "Not Found" }, { message: "Not Found" }],
  ])("%j", (body, expected) => {
    expect(readErrorBody(body)).toEqual(expected);
  });

  it("nothing to read: null", () => {
    expect(readErrorBody({ data: [] })).toBeNull();
    expect(readErrorBody("x")).toBeNull();
  });
});
