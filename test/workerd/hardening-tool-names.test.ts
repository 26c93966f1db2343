import { describe, expect, it } from "vitest";
import { call, configWith, FIXTURE_URL, received } from "./harness.ts";

// Issue 26, finding 4: a declared tool name is 1 to 128 characters of letters, digits and
// `_ - . : /` (docs/tool-calls.md#names) on every API that declares tools; anything else is a 400
// naming the field, before anything goes upstream.

const models = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/u-${crypto.randomUUID()}/behave/say/hi` }] } });
const LONG = "a".repeat(129);
const fn = (name: string) => ({ type: "function", function: { name, parameters: { type: "object" } } });

describe("a declared tool name", () => {
  it("over 128 characters, or with other characters, is a 400 invalid_value naming it on chat and responses", async () => {
    const before = (await received()).length;
    const cases: Array<[string, unknown, string]> = [
      ["/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }], tools: [fn("ok"), fn(LONG)] }, "tools[1].function.name"],
      ["/v1/chat/completions", { model: "m", stream: true, messages: [{ role: "user", content: "hi" }], tools: [fn("get weather")] }, "tools[0].function.name"],
      ["/v1/responses", { model: "m", input: "hi", tools: [{ type: "function", name: LONG, parameters: { type: "object" } }] }, "tools[0].name"],
      ["/v1/responses", { model: "m", input: "hi", tools: [{ type: "web_search" }, { type: "namespace", name: "ns", tools: [{ type: "function", name: "bad name" }] }] }, "tools[1].tools[0].name"],
      ["/v1/responses/compact", { model: "m", input: "hi", tools: [{ type: "custom", name: LONG }] }, "tools[0].name"],
    ];
    for (const [path, json, param] of cases) {
      const { res } = await call(path, { json }, models);
      const body = await res.json<any>();
      expect(res.status, `${path} ${param}`).toBe(400);
      expect(body.error, `${path} ${param}`).toMatchObject({ code: "invalid_value", param });
      expect(body.error.message, path).toContain("must be 1 to 128 characters");
    }
    expect((await received()).length).toBe(before);
  });

  it("is refused in Anthropic's shape on /v1/messages, naming the field", async () => {
    const before = (await received()).length;
    for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
      const json = { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }], tools: [{ name: "ok", input_schema: { type: "object" } }, { name: LONG, input_schema: { type: "object" } }] };
      const { res } = await call(path, { json }, models);
      const body = await res.json<any>();
      expect(res.status, path).toBe(400);
      expect(body.error.type, path).toBe("invalid_request_error");
      expect(body.error.message, path).toContain("tools[1].name must be 1 to 128 characters");
    }
    expect((await received()).length).toBe(before);
  });

  it("may be what agents send: MCP prefixes, dots, colons, slashes, 128 characters", async () => {
    const names = ["mcp__github__create_pull_request", "admin.tools.list", "user-profile/update", "server:tool", "a".repeat(128)];
    const { res } = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "hi" }], tools: names.map(fn) } }, models);
    expect(res.status).toBe(200);
  });
});
