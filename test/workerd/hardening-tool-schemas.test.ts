import { describe, expect, it } from "vitest";
import { MAX_TOOL_SCHEMA_DEPTH, MAX_TOOLS } from "../../src/schemas/tool-limits.ts";
import { call, configWith, FIXTURE_URL, received } from "./harness.ts";

// Issue 26: a declared schema (a tool's parameters or input_schema, a response format's schema) nests
// at most 64 levels deep on every endpoint that takes one; deeper is a 400 naming the field, before
// anything walks it (a schema 3,000 deep used to overflow the stack: a 500).

const models = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/u-${crypto.randomUUID()}/behave/say/hi` }] } });

/**
 * A schema whose objects nest exactly `levels` deep (`{"items":{"items":…{"type":"string"}}}`), as
 * JSON text: built as a string because the test's own JSON.stringify would overflow at depth 100,000.
 */
const deep = (levels: number) => `${'{"items":'.repeat(levels - 1)}{"type":"string"}${"}".repeat(levels - 1)}`;

/** Each endpoint's request with one deep schema in it, the param a refusal names, and whether it answers in Anthropic's shape. */
const cases = (schema: string): Array<{ path: string; body: string; param: string; anthropic?: boolean }> => [
  { path: "/v1/chat/completions", param: "tools[1].function.parameters", body: `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"ok","parameters":{"type":"object"}}},{"type":"function","function":{"name":"f","parameters":${schema}}}]}` },
  { path: "/v1/chat/completions", param: "response_format.json_schema.schema", body: `{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":${schema}}}}` },
  { path: "/v1/tool_calls/rewrite", param: "tools[0].function.parameters", body: `{"text":"hi","tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]}` },
  { path: "/v1/responses", param: "tools[0].parameters", body: `{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":${schema}}]}` },
  { path: "/v1/responses", param: "tools[1].tools[0].parameters", body: `{"model":"m","input":"hi","tools":[{"type":"web_search"},{"type":"namespace","name":"ns","tools":[{"type":"function","name":"f","parameters":${schema}}]}]}` },
  { path: "/v1/responses", param: "text.format.schema", body: `{"model":"m","input":"hi","text":{"format":{"type":"json_schema","name":"r","schema":${schema}}}}` },
  { path: "/v1/messages", param: "tools[0].input_schema", anthropic: true, body: `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":${schema}}]}` },
  { path: "/v1/messages/count_tokens", param: "tools[0].input_schema", anthropic: true, body: `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":${schema}}]}` },
];

const post = (path: string, body: string) => call(path, { method: "POST", body, headers: { "content-type": "application/json" } }, models);

describe("a declared schema's depth", () => {
  for (const levels of [3_000, 100_000, MAX_TOOL_SCHEMA_DEPTH + 1]) {
    it(`${levels} levels deep is a 400 invalid_value naming the field on every endpoint, and nothing goes upstream`, async () => {
      const before = (await received()).length;
      for (const { path, body, param, anthropic } of cases(deep(levels))) {
        const { res } = await post(path, body);
        const error = (await res.json<any>()).error;
        expect(res.status, `${path} ${param}`).toBe(400);
        if (anthropic) {
          expect(error.type, path).toBe("invalid_request_error");
          expect(error.message, path).toContain(`${param} must not nest objects and arrays more than 64 levels deep`);
        } else {
          expect(error, `${path} ${param}`).toMatchObject({ code: "invalid_value", param });
          expect(error.message, `${path} ${param}`).toContain("more than 64 levels deep");
        }
      }
      expect((await received()).length).toBe(before);
    });
  }

  it("of 64 levels is taken on every endpoint", async () => {
    for (const { path, body, param } of cases(deep(MAX_TOOL_SCHEMA_DEPTH))) {
      const { res, done } = await post(path, body);
      expect(res.status, `${path} ${param}: ${res.status === 200 ? "" : await res.clone().text()}`).toBe(200);
      await res.arrayBuffer();
      await done();
    }
  });
});

describe("the number of declared tools", () => {
  it("over 512 is a 400 invalid_value on chat and Messages, and a namespace's tools count on Responses", async () => {
    const fn = (i: number) => ({ type: "function", function: { name: `t${i}` } });
    const flat = (i: number) => ({ type: "function", name: `t${i}` });
    const half = MAX_TOOLS / 2;
    const cases: Array<[string, unknown, string]> = [
      ["/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }], tools: Array.from({ length: MAX_TOOLS + 1 }, (_, i) => fn(i)) }, "at most 512 items"],
      ["/v1/messages", { model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }], tools: Array.from({ length: MAX_TOOLS + 1 }, (_, i) => ({ name: `t${i}` })) }, "at most 512 items"],
      ["/v1/responses", { model: "m", input: "hi", tools: [...Array.from({ length: half }, (_, i) => flat(i)), { type: "namespace", name: "ns", tools: Array.from({ length: half }, (_, i) => flat(i)) }] }, "at most 512 tools, counting those inside namespaces"],
    ];
    for (const [path, json, message] of cases) {
      const { res } = await call(path, { json }, models);
      expect(res.status, path).toBe(400);
      const error = (await res.json<any>()).error;
      expect(error.message, path).toContain(message);
      if (!path.startsWith("/v1/messages")) expect(error, path).toMatchObject({ code: "invalid_value", param: "tools" });
    }
  });
});
