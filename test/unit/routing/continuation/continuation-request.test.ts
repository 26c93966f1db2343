import { describe, expect, it } from "vitest";
import { continuationRequest, continuationBlocker } from "../../../../src/routing/continuation/continuation-request.ts";
import { literalOf } from "../../../../src/routing/continuation/grammar-after.ts";
import type { ChatRequest } from "../../../../src/schemas/chat-request.ts";

const base: ChatRequest = { model: "m", messages: [{ role: "user", content: "go" }] };
const written = { text: "The quick", reasoning: "", tokens: 3 };

describe("continuationBlocker", () => {
  it("allows a plain request, tools included", () => {
    expect(continuationBlocker(base)).toBeNull();
    expect(continuationBlocker({ ...base, n: 1, tools: [{ type: "function", function: { name: "f" } }], response_format: { type: "text" } } as ChatRequest)).toBeNull();
    expect(continuationBlocker({ ...base, grammar: 'root ::= "x"' } as ChatRequest)).toBeNull();
  });
  it("rules out what a continuation cannot carry exactly", () => {
    expect(continuationBlocker({ ...base, n: 2 })).toBe("n > 1");
    expect(continuationBlocker({ ...base, logprobs: true } as ChatRequest)).toBe("logprobs");
    expect(continuationBlocker({ ...base, top_logprobs: 2 } as ChatRequest)).toBe("logprobs");
    expect(continuationBlocker({ ...base, messages: [...base.messages, { role: "assistant", content: "Sure" }] })).toBe("a client prefill");
    expect(continuationBlocker({ ...base, response_format: { type: "json_object" } } as ChatRequest)).toBe("response_format");
    expect(continuationBlocker({ ...base, json_schema: {} } as ChatRequest)).toBe("json_schema");
    expect(continuationBlocker({ ...base, grammar: "root ::= [a-z]+" } as ChatRequest)).toBe("a grammar that is not one literal");
  });
});

describe("continuationRequest", () => {
  it("adds what was written as a trailing assistant message, with the reasoning", () => {
    const r = continuationRequest(base, { ...written, reasoning: "think" })!;
    expect(r.messages).toEqual([...base.messages, { role: "assistant", content: "The quick", reasoning_content: "think" }]);
    expect(base.messages).toHaveLength(1);
  });
  it("spends the token budget already used; none left: null", () => {
    expect(continuationRequest({ ...base, max_tokens: 10, max_completion_tokens: 8 }, written)).toMatchObject({ max_tokens: 7, max_completion_tokens: 5 });
    expect(continuationRequest({ ...base, max_tokens: 3 }, written)).toBeNull();
  });
  it("spends llama-server's n_predict too, which it reads before max_tokens (a bound the meter set)", () => {
    expect(continuationRequest({ ...base, max_tokens: 5, n_predict: 5 } as ChatRequest, written)).toMatchObject({ max_tokens: 2, n_predict: 2 });
    expect(continuationRequest({ ...base, n_predict: 3 } as ChatRequest, written)).toBeNull();
  });
  it("cuts a one-literal grammar to what remains; text off the literal: null", () => {
    const g = `root ::= ${JSON.stringify("The quick brown fox")}`;
    const r = continuationRequest({ ...base, grammar: g } as ChatRequest, written) as ChatRequest & { grammar: string };
    expect(literalOf(r.grammar)).toBe(" brown fox");
    expect(continuationRequest({ ...base, grammar: g } as ChatRequest, { ...written, text: "A slow" })).toBeNull();
  });
  it("nothing written yet (mid-reasoning): null", () => {
    expect(continuationRequest(base, { text: "", reasoning: "hmm", tokens: 4 })).toBeNull();
  });
});
