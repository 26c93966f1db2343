import { describe, expect, it } from "vitest";
import { mapLlamaCompletion } from "../../../../src/upstreams/llama/map-llama-completion.ts";

describe("mapLlamaCompletion", () => {
  it("keeps the answer's logprobs on its text, without the end-of-generation token's empty entry", () => {
    const hi = { id: 13048, token: "Hi", bytes: [72, 105], logprob: -1.5, top_logprobs: [] };
    const eos = { id: 151645, token: "", bytes: [], logprob: -0.1, top_logprobs: [] };
    const events = mapLlamaCompletion({ choices: [{ index: 0, finish_reason: "stop", message: { content: "Hi" }, logprobs: { content: [hi, eos] } }], usage: { prompt_tokens: 3, completion_tokens: 2 } }, "llama:test");
    expect(events[0]).toEqual({ type: "text", delta: "Hi", logprobs: [hi] });
    expect(events.slice(1).map((e) => e.type)).toEqual(["finish", "usage"]);
  });

  it("gives a plain text event when none were asked for", () => {
    const events = mapLlamaCompletion({ choices: [{ index: 0, finish_reason: "stop", message: { content: "Hi" } }] }, "llama:test");
    expect(events[0]).toEqual({ type: "text", delta: "Hi" });
  });
});
