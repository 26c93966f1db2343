import { describe, expect, it } from "vitest";
import { parseLlamaMetrics } from "../../../src/health/parse-llama-metrics.ts";

describe("parseLlamaMetrics", () => {
  it("reads requests_processing and requests_deferred from llama-server's Prometheus text", () => {
    const text = [
      "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.",
      "# TYPE llamacpp:prompt_tokens_total counter",
      "llamacpp:prompt_tokens_total 1234",
      "# HELP llamacpp:requests_processing Number of requests processing.",
      "# TYPE llamacpp:requests_processing gauge",
      "llamacpp:requests_processing 3",
      "# TYPE llamacpp:requests_deferred gauge",
      "llamacpp:requests_deferred 7",
    ].join("\n");
    expect(parseLlamaMetrics(text)).toEqual({ processing: 3, deferred: 7 });
  });
  it("null without the gauges (an error body, another server)", () => {
    expect(parseLlamaMetrics('{"error":{"code":501}}')).toBeNull();
  });
});
