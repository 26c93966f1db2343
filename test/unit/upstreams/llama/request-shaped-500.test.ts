import { describe, expect, it } from "vitest";
import { classifyFailure, countsAgainstUpstream, retriesSameTarget } from "../../../../src/health/classify-failure.ts";
import { mapLlamaError } from "../../../../src/upstreams/llama/map-llama-error.ts";
import { failureClass } from "../../../../src/routing/attempt/final-outcome.ts";
import imageUnsupported from "../../../fixtures/llama/error-image-unsupported-500.body.json";
import jsonSchema500 from "../../../fixtures/llama/error-json-schema-500.body.json";
import malformedJson from "../../../fixtures/llama/error-malformed-json-500.body.json";

// llama-server answers some requests it cannot take with 500 server_error. What the request caused
// is no news about the server (issue 26, finding 6): it must neither count against the server's
// health nor be tried there again.
const up = "llama:127.0.0.1:8080";
const json = "application/json; charset=utf-8";
const kindOf = (body: unknown) => {
  const e = mapLlamaError(500, JSON.stringify(body), json, up);
  return { e, kind: classifyFailure(e, 500) };
};

describe("llama-server 500s caused by the request", () => {
  it("a schema it cannot convert (error-json-schema-500): a client mistake, 400, not retried anywhere, not counted", () => {
    const { e, kind } = kindOf(jsonSchema500);
    expect([e.status, e.type, e.retryable]).toEqual([400, "invalid_request_error", false]);
    expect(e.message).toContain("JSON schema conversion failed");
    expect(kind).toBe("client");
    expect(countsAgainstUpstream(kind)).toBe(false);
    expect(retriesSameTarget(kind)).toBe(false);
  });

  it("the other shapes of a schema or grammar refusal, and a request field it could not read", () => {
    for (const message of [
      "JSON schema conversion failed:\nUnrecognized schema: {\"type\":\"foo\"}",
      "Field 'json_schema': \"json_schema\": JSON schema conversion failed:\nUnsupported ref: http://example.com/x",
      "Failed to initialize samplers: failed to parse grammar",
      "[json.exception.type_error.302] type must be number, but is string",
    ]) {
      const { e, kind } = kindOf({ error: { code: 500, message, type: "server_error" } });
      expect([e.status, kind], message).toEqual([400, "client"]);
    }
    expect(kindOf(malformedJson).kind).toBe("client");
  });

  it("an image to a server without a vision projector (error-image-unsupported-500): another target may take it; not counted, not retried there", () => {
    const { e, kind } = kindOf(imageUnsupported);
    expect([e.status, e.code, e.retryable]).toEqual([400, "unsupported_content", true]);
    expect(kind).toBe("unavailable");
    expect(countsAgainstUpstream(kind)).toBe(false);
    expect(retriesSameTarget(kind)).toBe(false);
    // When no target takes it, it is the request's answer (a 400), before any server's failure.
    expect(failureClass({ target: up, error: e })).toBe("request");
  });

  it("a 500 the server itself failed with still counts and is retried there", () => {
    const { e, kind } = kindOf({ error: { code: 500, message: "std::bad_alloc", type: "server_error" } });
    expect([e.status, kind]).toEqual([502, "broken"]);
    expect(countsAgainstUpstream(kind)).toBe(true);
    expect(retriesSameTarget(kind)).toBe(true);
  });
});
