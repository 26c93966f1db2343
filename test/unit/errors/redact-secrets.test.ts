import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";
import { redactKnownSecrets, redactSecrets, rememberSecrets, secretNames } from "../../../src/errors/redact-secrets.ts";
import { mapWebLlmError } from "../../../src/upstreams/browser/map-web-llm-error.ts";
import { mapLlamaChunk } from "../../../src/upstreams/llama/map-llama-chunk.ts";
import { mapLlamaError, mapLlamaErrorObject } from "../../../src/upstreams/llama/map-llama-error.ts";

describe("redactSecrets", () => {
  it("replaces every occurrence of each secret, the longest first", () => {
    expect(redactSecrets("a sk-12345678 b sk-12345678", ["sk-12345678"])).toBe("a [redacted] b [redacted]");
    expect(redactSecrets("key=sk-12345678-long", ["sk-12345678", "sk-12345678-long"])).toBe("key=[redacted]");
  });

  it("leaves strings shorter than 8 characters alone, and text without a secret unchanged", () => {
    expect(redactSecrets("the model is short", ["short", "model"])).toBe("the model is short");
    expect(redactSecrets("nothing here", ["sk-12345678"])).toBe("nothing here");
  });

  it("names ADMIN_TOKEN, SERVE_TOKEN and every apiKeySecret the configuration names: targets', routers' and the collector's", () => {
    const config = {
      models: { m: { targets: [{ kind: "llama", url: "https://gpu.example.com", apiKeySecret: "GPU_KEY" }, { kind: "browser", model: "x" }] } },
      routers: [{ url: "https://router.example.com", apiKeySecret: "ROUTER_KEY" }],
      observability: { otlp: { endpoint: "https://otel.example.com", apiKeySecret: "OTLP_KEY" } },
    };
    const parsed = parseConfig({ SWITCHYARD_CONFIG: JSON.stringify(config) });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    expect(secretNames(parsed.config)).toEqual(["ADMIN_TOKEN", "SERVE_TOKEN", "GPU_KEY", "ROUTER_KEY", "OTLP_KEY"]);
    expect(secretNames(null)).toEqual(["ADMIN_TOKEN", "SERVE_TOKEN"]);
  });
});

describe("upstream text never carries a known secret", () => {
  const key = `sk-upstream-${crypto.randomUUID()}`;
  const serve = `serve-${crypto.randomUUID()}`;
  rememberSecrets({ GPU_KEY: key, SERVE_TOKEN: serve, SHORT: "abc" }, ["GPU_KEY", "SERVE_TOKEN", "SHORT"]);

  it("redactKnownSecrets takes out what was remembered", () => {
    expect(redactKnownSecrets(`Bearer ${key} and ${serve}`)).toBe("Bearer [redacted] and [redacted]");
    expect(redactKnownSecrets("abc stays")).toBe("abc stays");
  });

  it("llama-server's error body, whatever its status", () => {
    for (const status of [400, 401, 404, 422, 429, 500, 503]) {
      const body = JSON.stringify({ error: { code: status, message: `got Authorization: Bearer ${key}`, type: "invalid_request_error" } });
      const err = mapLlamaError(status, body, "application/json", "llama:gpu");
      expect(err.message, String(status)).not.toContain(key);
    }
    expect(mapLlamaErrorObject(400, { message: `Bearer ${key}` }, "llama:gpu").message).toBe("llama:gpu rejected the request: Bearer [redacted]");
  });

  it("an in-stream error frame", () => {
    const [event] = mapLlamaChunk({ error: { code: 500, message: `upstream saw ${key}` } } as never, { timings: undefined } as never, "llama:gpu");
    expect(JSON.stringify(event)).not.toContain(key);
    expect(JSON.stringify(event)).toContain("[redacted]");
  });

  it("a browser session's error, kind and message", () => {
    for (const kind of ["ContextWindowSizeExceededError", "RangeError", "WebGPUNotAvailableError", "ModelNotLoadedError", "SessionLost", "Error", serve]) {
      const err = mapWebLlmError(kind, `token ${serve}, key ${key}`, "browser:m");
      expect(err.message, kind).not.toContain(serve);
      expect(err.message, kind).not.toContain(key);
    }
  });
});
