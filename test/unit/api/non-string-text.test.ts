import { describe, expect, it } from "vitest";
import { convertMessagesRequest } from "../../../src/api/messages/convert-request.ts";
import { convertResponsesRequest } from "../../../src/api/responses/convert-request.ts";
import { validateBody } from "../../../src/api/validate-body.ts";
import { ProxyError } from "../../../src/errors/proxy-error.ts";
import { sinceDay } from "../../../src/routes/admin.ts";
import { MessagesRequestSchema } from "../../../src/schemas/messages-request.ts";
import { ResponsesRequestSchema } from "../../../src/schemas/responses-request.ts";
import { validateChatRequest } from "../../../src/api/chat/index.ts";

function refusal(run: () => unknown): ProxyError {
  try {
    run();
  } catch (e) {
    if (e instanceof ProxyError) return e;
    throw e;
  }
  throw new Error("not refused");
}

const NOT_STRINGS = [5, null, true, ["a"], { value: "a" }];

describe("a text part whose text is not a string is refused, naming it", () => {
  it.each(NOT_STRINGS)("chat: messages[…].content[…].text = %j", (text) => {
    const e = refusal(() => validateChatRequest({ model: "m", messages: [{ role: "user", content: [{ type: "text", text: "ok" }] }, { role: "user", content: [{ type: "image_url", image_url: { url: "data:," } }, { type: "text", text }] }] }));
    expect([e.status, e.code, e.param]).toEqual([400, "invalid_type", "messages[1].content[1].text"]);
    expect(e.message).toContain("messages[1].content[1].text must be a string");
  });

  it("chat: string content and string text parts still pass", () => {
    expect(validateChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }, { role: "user", content: [{ type: "text", text: "hi" }] }] }).messages).toHaveLength(2);
    // A content that is neither a string nor an array still names the content.
    expect(refusal(() => validateChatRequest({ model: "m", messages: [{ role: "user", content: 5 }] })).param).toBe("messages[0].content");
  });

  const responses = (input: unknown) => convertResponsesRequest(validateBody(ResponsesRequestSchema, { model: "m", input }));
  it.each(NOT_STRINGS)("responses: input_text, output_text and refusal parts, and tool outputs = %j", (text) => {
    const cases: Array<[unknown, string]> = [
      [[{ role: "user", content: [{ type: "input_text", text }] }], "input[0].content[0].text"],
      [[{ type: "message", role: "assistant", content: [{ type: "output_text", text: "a" }, { type: "output_text", text }] }], "input[0].content[1].text"],
      [[{ type: "message", role: "assistant", content: [{ type: "refusal", refusal: text }] }], "input[0].content[0].refusal"],
      [[{ type: "function_call", call_id: "c1", name: "f", arguments: "{}" }, { type: "function_call_output", call_id: "c1", output: [{ type: "input_text", text }] }], "input[1].output[0].text"],
    ];
    for (const [input, param] of cases) {
      const e = refusal(() => responses(input));
      expect([e.status, e.code, e.param], param).toEqual([400, "invalid_type", param]);
    }
  });

  const messages = (body: Record<string, unknown>) => convertMessagesRequest(validateBody(MessagesRequestSchema, { model: "m", max_tokens: 8, ...body }));
  it.each(NOT_STRINGS)("messages: user, assistant, system, system-in-messages and tool_result text blocks = %j", (text) => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ messages: [{ role: "user", content: [{ type: "text", text }] }] }, "messages[0].content[0].text"],
      [{ messages: [{ role: "user", content: "q" }, { role: "assistant", content: [{ type: "text", text }] }] }, "messages[1].content[0].text"],
      [{ messages: [{ role: "system", content: [{ type: "text", text }] }, { role: "user", content: "q" }] }, "messages[0].content[0].text"],
      [{ system: [{ type: "text", text }], messages: [{ role: "user", content: "q" }] }, "system[0].text"],
      [{ messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text }] }] }] }, "messages[0].content[0].content[0].text"],
    ];
    for (const [body, param] of cases) {
      const e = refusal(() => messages(body));
      expect([e.status, e.code, e.param], param).toEqual([400, "invalid_type", param]);
    }
  });

  it("a text part without text still reads as empty text (as before)", () => {
    expect(responses([{ role: "user", content: [{ type: "input_text" }] }]).chat.messages).toEqual([{ role: "user", content: "" }]);
  });
});

describe("?since= is a real calendar day", () => {
  it.each(["2026-13-45", "2026-02-30", "2026-02-29", "2026-00-10", "2026-4-01", "20260401", "2026-04-01T00:00:00Z", "yesterday", ""])("refuses %j with 400 invalid_value naming since", (value) => {
    const e = refusal(() => sinceDay([value]));
    expect([e.status, e.code, e.param]).toEqual([400, "invalid_value", "since"]);
  });

  it("refuses it given twice, accepts real days (leap years included) and its absence", () => {
    expect(refusal(() => sinceDay(["2026-01-01", "2026-01-02"])).code).toBe("invalid_value");
    expect(sinceDay(["2028-02-29"])).toBe("2028-02-29");
    expect(sinceDay(["2026-12-31"])).toBe("2026-12-31");
    expect(sinceDay(undefined)).toBeUndefined();
  });
});
