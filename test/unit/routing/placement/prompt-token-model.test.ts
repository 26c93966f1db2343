import { describe, expect, it } from "vitest";
import { fitTokenLine, PromptTokenModel, PRIOR_RATE } from "../../../../src/routing/placement/prompt-token-model.ts";
import { CLEAR_FACTOR, estimateFit } from "../../../../src/upstreams/context-fit.ts";

// Recorded from the test model (tiny-qwen2, llama-server 3.21.1): one user message's JSON characters
// and its tokens by the server's /apply-template then /tokenize (add_special), 512-token slots.
const TRACE = {
  hi: { chars: 30, tokens: 30 },
  tag: { chars: 50, tokens: 35 }, // "[[tag]] write the text"
  lorem20: { chars: 568, tokens: 131 },
  lorem80: { chars: 2188, tokens: 431 },
  lorem120: { chars: 3268, tokens: 631 },
  fox100: { chars: 4528, tokens: 1030 },
  x6000: { chars: 6028, tokens: 779 },
};

describe("PromptTokenModel on a recorded trace", () => {
  it("tiny prompts alone: the template's fixed tokens go to the overhead, not the rate; long prompts are estimated within the clear factor", () => {
    const m = new PromptTokenModel();
    for (let i = 0; i < 6; i++) m.add(TRACE.hi), m.add(TRACE.tag);
    const line = m.fitted();
    expect(line.rate).toBe(PRIOR_RATE);
    expect(line.overhead).toBeGreaterThan(20);
    for (const s of [TRACE.lorem80, TRACE.lorem120, TRACE.fox100, TRACE.x6000]) {
      const e = m.estimate(s.chars);
      expect(e / s.tokens).toBeLessThan(CLEAR_FACTOR);
      expect(s.tokens / e).toBeLessThan(CLEAR_FACTOR);
    }
    // The old single ratio (tokens over characters of those answers, less 15 %) put 431 tokens at 1,860.
    expect(Math.floor(TRACE.lorem80.chars * (TRACE.hi.tokens / TRACE.hi.chars) * 0.85)).toBeGreaterThan(512 * 3);
    // Near the 512-token window: counted by the server, never refused on the estimate.
    expect(estimateFit(m.estimate(TRACE.lorem80.chars), 8, 512)).toBe("count");
  });

  it("samples of many sizes: the line is fitted, its rate near the text's own", () => {
    const line = fitTokenLine([TRACE.hi, TRACE.tag, TRACE.lorem20, TRACE.lorem80, TRACE.lorem120]);
    expect(line.rate).toBeGreaterThan(0.17);
    expect(line.rate).toBeLessThan(0.2);
    expect(line.overhead).toBeGreaterThan(10);
    expect(line.overhead).toBeLessThan(40);
    expect(Math.abs(line.overhead + line.rate * TRACE.lorem120.chars - TRACE.lorem120.tokens)).toBeLessThan(20);
  });

  it("keeps the last samples only, and ignores empty ones", () => {
    const m = new PromptTokenModel();
    m.add({ chars: 0, tokens: 5 });
    expect(m.learned).toBe(false);
    expect(m.estimate(1000)).toBe(Math.round(PRIOR_RATE * 1000));
    for (let i = 0; i < 100; i++) m.add(TRACE.lorem80);
    expect(m.estimate(TRACE.lorem80.chars)).toBe(TRACE.lorem80.tokens);
  });
});
