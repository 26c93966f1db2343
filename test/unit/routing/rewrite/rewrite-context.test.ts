import { describe, expect, it } from "vitest";
import { rewriteContext } from "../../../../src/routing/rewrite/rewrite-context.ts";
import type { ChatRequest } from "../../../../src/schemas/chat-request.ts";

const request = (extra: Record<string, unknown>, messages: Array<{ role: string; content: string }> = [{ role: "user", content: "Hi" }]) =>
  ({ model: "m", messages, ...extra }) as unknown as ChatRequest;

describe("what the request tells the tool-call rewriter", () => {
  it("nothing for a plain request", () => {
    expect(rewriteContext(request({}))).toEqual({});
  });

  it("a trailing assistant message is a prefill the output continues", () => {
    const r = rewriteContext(request({}, [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello," }]));
    expect(r).toEqual({ continuation: true });
  });

  it("llama.cpp's reasoning_format none keeps reasoning inline", () => {
    expect(rewriteContext(request({ reasoning_format: "none" }))).toEqual({ reasoningFormat: "none" });
    expect(rewriteContext(request({ reasoning_format: "auto" }))).toEqual({});
  });

  it("a JSON response_format asks for an answer without its fence", () => {
    expect(rewriteContext(request({ response_format: { type: "json_object" } }))).toEqual({ jsonResponse: true });
    expect(rewriteContext(request({ response_format: { type: "json_schema", json_schema: { name: "x", schema: {} } } }))).toEqual({ jsonResponse: true });
    expect(rewriteContext(request({ response_format: { type: "text" } }))).toEqual({});
    expect(rewriteContext(request({ response_format: null }))).toEqual({});
  });
});
