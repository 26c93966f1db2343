import { describe, expect, it } from "vitest";
import { validateChatRequest } from "../../../../src/api/chat/index.ts";
import { ProxyError } from "../../../../src/errors/proxy-error.ts";

function fail(body: unknown): ProxyError {
  try {
    validateChatRequest(body);
  } catch (e) {
    return e as ProxyError;
  }
  throw new Error("expected a validation error");
}

describe("validateChatRequest", () => {
  it("keeps unknown fields", () => {
    const r = validateChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }], top_k: 3, custom: { a: 1 } });
    expect(r).toMatchObject({ top_k: 3, custom: { a: 1 } });
  });
  it("names a missing messages field", () => {
    const e = fail({ model: "m" });
    expect([e.status, e.code, e.param]).toEqual([400, "missing_required_parameter", "messages"]);
  });
  it("names a wrong field type", () => {
    const e = fail({ model: "m", messages: "hi" });
    expect([e.status, e.code, e.param]).toEqual([400, "invalid_type", "messages"]);
    expect(e.message).toContain("messages must be an array");
  });
  it("names a nested problem with its path", () => {
    const e = fail({ model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: "ten" });
    expect(e.param).toBe("max_tokens");
    const e2 = fail({ model: "m", messages: [{ role: "robot", content: "hi" }] });
    expect(e2.param).toBe("messages[0].role");
  });
  it("refuses a body that is not an object", () => {
    expect(fail([1, 2]).code).toBe("invalid_type");
  });
});
