import { describe, expect, it } from "vitest";
import { contextFit, promptTokensLow, tokensFit } from "../../../src/upstreams/context-fit.ts";
import { classifyFailure } from "../../../src/health/classify-failure.ts";

describe("contextFit", () => {
  it("estimates low: 0.2 tokens a character before the tokenizer is learned, the learned ratio less 15 % after", () => {
    expect(promptTokensLow(10_000, undefined)).toBe(2000);
    expect(promptTokensLow(10_000, 0.4)).toBe(3400);
  });
  it("an unknown window fits; a prompt over the window does not, with the error it would have answered", () => {
    expect(contextFit({ chars: 1e6 }, undefined, undefined)).toEqual({ fit: "fits" });
    const f = contextFit({ chars: 10_000 }, 0.4, 2048);
    expect(f.fit).toBe("too-long");
    if (f.fit !== "too-long") return;
    expect(f.error).toMatchObject({ status: 400, code: "context_length_exceeded", retryable: true });
    expect(f.error.message).toBe("This model's maximum context length is 2048 tokens. However, your messages resulted in 3400 tokens. Please reduce the length of the messages.");
    expect(classifyFailure(f.error)).toBe("too_long");
  });
  it("a prompt that fits but leaves no room for max_tokens is a fallback, not a skip", () => {
    expect(contextFit({ chars: 10_000, maxTokens: 1000 }, 0.4, 4096)).toEqual({ fit: "prompt" });
    expect(contextFit({ chars: 10_000, maxTokens: 500 }, 0.4, 4096)).toEqual({ fit: "fits" });
  });
  it("tokensFit, the same check from a token estimate (a browser session's window): as many tokens as the window do not fit", () => {
    expect(tokensFit(4095, undefined, 4096)).toEqual({ fit: "fits" });
    const f = tokensFit(4096, undefined, 4096);
    expect(f.fit).toBe("too-long");
    if (f.fit === "too-long") expect(f.error.message).toBe("This model's maximum context length is 4096 tokens. However, your messages resulted in 4096 tokens. Please reduce the length of the messages.");
    expect(tokensFit(4000, 97, 4096)).toEqual({ fit: "prompt" });
    expect(tokensFit(1e9, undefined, undefined)).toEqual({ fit: "fits" });
  });
});
