import { describe, expect, it } from "vitest";
import { CLEAR_FACTOR, estimateFit, promptTokensLow, tokensFit } from "../../../src/upstreams/context-fit.ts";
import { classifyFailure } from "../../../src/health/classify-failure.ts";

describe("context fit", () => {
  it("a browser session's low estimate: 0.2 tokens a character", () => {
    expect(promptTokensLow(10_000)).toBe(2000);
  });
  it("an estimate clearly below a window fits alone, clearly above does not, near it asks the server's count", () => {
    expect(CLEAR_FACTOR).toBe(2);
    expect(estimateFit(1e9, undefined, undefined)).toEqual({ fit: "fits" });
    expect(estimateFit(1024, undefined, 2048)).toEqual({ fit: "fits" });
    expect(estimateFit(1024, 1500, 2048)).toEqual({ fit: "prompt" });
    expect(estimateFit(1025, undefined, 2048)).toBe("count");
    expect(estimateFit(4043, 512, 2048)).toBe("count"); // issue 41: a 1,421-token prompt estimated from tiny ones
    expect(estimateFit(4095, undefined, 2048)).toBe("count");
    const f = estimateFit(4096, undefined, 2048);
    expect(f).toMatchObject({ fit: "too-long" });
    if (typeof f === "string" || f.fit !== "too-long") return;
    expect(f.error).toMatchObject({ status: 400, code: "context_length_exceeded", retryable: true });
    // OpenAI's wording first (clients' compaction matches it), then that the count is an estimate.
    expect(f.error.message).toMatch(/^This model's maximum context length is 2048 tokens\. However, your messages resulted in 4096 tokens\. Please reduce the length of the messages\. \(The count is Switchyard's estimate/);
    expect(classifyFailure(f.error)).toBe("too_long");
  });
  it("tokensFit, the check from a count: as many tokens as the window do not fit; no room for max_tokens is a fallback, not a skip", () => {
    expect(tokensFit(4095, undefined, 4096)).toEqual({ fit: "fits" });
    const f = tokensFit(4096, undefined, 4096);
    expect(f.fit).toBe("too-long");
    if (f.fit === "too-long") expect(f.error.message).toBe("This model's maximum context length is 4096 tokens. However, your messages resulted in 4096 tokens. Please reduce the length of the messages.");
    expect(tokensFit(4000, 97, 4096)).toEqual({ fit: "prompt" });
    expect(tokensFit(1e9, undefined, undefined)).toEqual({ fit: "fits" });
  });
});
