import { describe, expect, it } from "vitest";
import { convertMessagesRequest } from "../../../src/api/messages/convert-request.ts";
import { estimateTokens } from "../../../src/api/messages/estimate-tokens.ts";
import { validateBody } from "../../../src/api/validate-body.ts";
import { CountTokensRequestSchema, MessagesRequestSchema } from "../../../src/schemas/messages-request.ts";
import { bashSchema, claudeCodeFirstRequest } from "../../fixtures/claude-code/first-request.ts";

describe("Claude Code's first request", () => {
  it("converts: system blocks first, the in-messages system text in place, the deferred placeholder hidden", () => {
    const chat = convertMessagesRequest(validateBody(MessagesRequestSchema, claudeCodeFirstRequest));
    expect(chat.messages.map((m) => m.role)).toEqual(["system", "user", "system"]);
    expect(chat.messages[0]!.content).toBe(claudeCodeFirstRequest.system.map((b) => b.text).join("\n"));
    expect(chat.messages[1]!.content).toBe("<system-reminder>\nAttribution for git commits…</system-reminder>create hello.txt");
    expect(chat.messages[2]!.content).toBe("# Environment\nYou have been invoked in the following environment: …");
    expect(chat.tools?.map((t) => t.function.name)).toEqual(["Bash", "ToolSearch"]);
    expect(chat.tools?.[0]!.function.parameters).toEqual(bashSchema);
    expect(chat).toMatchObject({ model: "qwen", max_tokens: 32000, stream: true });
    for (const key of ["thinking", "context_management", "output_config", "metadata", "system"]) expect(chat).not.toHaveProperty(key);
  });

  it("count_tokens accepts the same body without max_tokens; the estimate is ceil(JSON chars / 4) of messages and tools", () => {
    const { max_tokens: _, stream: __, ...body } = claudeCodeFirstRequest;
    const chat = convertMessagesRequest(validateBody(CountTokensRequestSchema, body));
    const chars = JSON.stringify(chat.messages).length + JSON.stringify(chat.tools).length;
    expect(estimateTokens(chat)).toBe(Math.ceil(chars / 4));
    expect(estimateTokens({ messages: chat.messages })).toBe(Math.ceil(JSON.stringify(chat.messages).length / 4));
    expect(estimateTokens(chat)).toBeGreaterThan(estimateTokens({ messages: chat.messages }));
  });
});
