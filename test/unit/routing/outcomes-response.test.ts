import { describe, expect, it } from "vitest";
import { anthropicErrorResponse } from "../../../src/api/messages/anthropic-error.ts";
import { errorResponse, outcomesHeader } from "../../../src/errors/error-envelope.ts";
import { ProxyError } from "../../../src/errors/proxy-error.ts";
import { withAttempts } from "../../../src/responders/sse-response.ts";

// Every target's outcome on the final error: `x-switchyard-outcomes` and `x_switchyard.outcomes`.

const final = () => {
  const err = new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, retryable: true, message: "No browser session is serving Qwen-x." });
  err.attempts = 2;
  err.outcomes = [
    { target: "llama:127.0.0.1:9", code: "upstream_unreachable", status: 502 },
    { target: "browser:Qwen-x", code: "no_capacity", status: 503 },
  ];
  return err;
};

describe("the final error's outcomes", () => {
  it("OpenAI envelope: the header, and x_switchyard beside an unchanged error object", async () => {
    const res = errorResponse(final());
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.headers.get("x-switchyard-attempts")).toBe("2");
    expect(res.headers.get("x-switchyard-outcomes")).toBe("llama:127.0.0.1:9=upstream_unreachable; browser:Qwen-x=no_capacity");
    expect(await res.json()).toEqual({
      error: { message: "No browser session is serving Qwen-x.", type: "unavailable_error", param: null, code: "no_capacity" },
      x_switchyard: {
        attempts: 2,
        outcomes: [
          { target: "llama:127.0.0.1:9", code: "upstream_unreachable", status: 502 },
          { target: "browser:Qwen-x", code: "no_capacity", status: 503 },
        ],
      },
    });
  });

  it("an error that tried no target is exactly OpenAI's envelope, with neither header", async () => {
    const res = errorResponse(new ProxyError({ status: 400, code: "invalid_json", message: "not JSON" }));
    expect(res.headers.get("x-switchyard-outcomes")).toBeNull();
    expect(res.headers.get("x-switchyard-attempts")).toBeNull();
    expect(Object.keys(await res.json())).toEqual(["error"]);
  });

  it("Anthropic's shape: the headers, the body unchanged", async () => {
    const res = anthropicErrorResponse(final());
    expect(res.headers.get("x-switchyard-outcomes")).toBe("llama:127.0.0.1:9=upstream_unreachable; browser:Qwen-x=no_capacity");
    expect(res.headers.get("x-switchyard-attempts")).toBe("2");
    expect(await res.json()).toEqual({ type: "error", error: { type: "overloaded_error", message: "No browser session is serving Qwen-x.", code: "no_capacity" }, request_id: null });
  });

  it("withAttempts (errors before commit on the streaming paths) adds both headers", () => {
    expect(withAttempts({ "x-switchyard-target": "" }, final())).toEqual({
      "x-switchyard-target": "",
      "x-switchyard-attempts": "2",
      "x-switchyard-outcomes": "llama:127.0.0.1:9=upstream_unreachable; browser:Qwen-x=no_capacity",
    });
  });

  it("a target name that would break the list or the header is percent-encoded", () => {
    const header = outcomesHeader([{ target: "browser:Qwén; a=b,c %\n", code: "no_capacity", status: 503 }]);
    expect(header).toBe("browser:Qw%C3%A9n%3B%20a%3Db%2Cc%20%25%0A=no_capacity");
    expect(() => new Headers({ "x-switchyard-outcomes": header })).not.toThrow();
    expect(decodeURIComponent(header.split("=")[0]!)).toBe("browser:Qwén; a=b,c %\n");
  });
});
