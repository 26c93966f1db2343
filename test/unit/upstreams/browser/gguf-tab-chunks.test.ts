// A GGUF tab's chunks (wllama: llama-server's own shape, recorded in headless Chromium from the
// project's tiny GGUF) read like llama-server's: usage and the engine's own top-level `timings`.
import { describe, expect, it } from "vitest";
import { normalizeWebLlmChunk } from "../../../../src/upstreams/browser/normalize-web-llm-chunk.ts";

/** wllama 3.8.1's last chunk of a streamed chat completion (include_usage), as it yielded it. */
const USAGE_CHUNK = {
  choices: [],
  created: 1796529615,
  id: "",
  model: "",
  system_fingerprint: "wllama",
  object: "chat.completion.chunk",
  usage: { completion_tokens: 8, prompt_tokens: 30, total_tokens: 38, prompt_tokens_details: { cached_tokens: 0 } },
  timings: { cache_n: 0, prompt_n: 30, prompt_ms: 710.301, prompt_per_token_ms: 23.6767, prompt_per_second: 42.23561560521525, predicted_n: 8, predicted_ms: 1689, predicted_per_token_ms: 241.28571428571428, predicted_per_second: 4.144464179988159 },
};

describe("a GGUF tab's usage chunk", () => {
  it("keeps the engine's timings (top-level, as llama-server sends them), not only its counts", () => {
    expect(normalizeWebLlmChunk(USAGE_CHUNK, "browser:tiny")).toEqual([
      {
        type: "usage",
        usage: { promptTokens: 30, completionTokens: 8 },
        timings: { cache_n: 0, prompt_n: 30, prompt_ms: 710.301, prompt_per_second: 42.23561560521525, predicted_n: 8, predicted_ms: 1689, predicted_per_second: 4.144464179988159 },
      },
    ]);
  });

  it("ignores timings that are not numbers", () => {
    const events = normalizeWebLlmChunk({ ...USAGE_CHUNK, timings: { predicted_per_second: "fast", prompt_n: -1 } as never }, "browser:tiny");
    expect(events).toEqual([{ type: "usage", usage: { promptTokens: 30, completionTokens: 8 } }]);
  });
});
