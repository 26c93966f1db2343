import { describe, expect, it } from "vitest";
import { call, configWith, createKey, FIXTURE_URL, keyedVars, received } from "./harness.ts";

// Input the proxy reads is checked before anything goes upstream: a text part whose text is not a
// string, and the usage routes' ?since= (a real calendar day).

const models = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/u-${crypto.randomUUID()}/behave/say/hi` }] } });

describe("a text part with a non-string text", () => {
  it("is a 400 invalid_type naming the field on chat, responses and messages, and never reaches the upstream", async () => {
    const before = (await received()).length;
    const cases: Array<[string, unknown, string]> = [
      ["/v1/chat/completions", { model: "m", messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] }, "messages[0].content[0].text"],
      ["/chat/completions", { model: "m", stream: true, messages: [{ role: "user", content: [{ type: "text", text: { a: 1 } }] }] }, "messages[0].content[0].text"],
      ["/v1/responses", { model: "m", input: [{ role: "user", content: [{ type: "input_text", text: 5 }] }] }, "input[0].content[0].text"],
      ["/v1/responses/compact", { model: "m", input: [{ role: "user", content: [{ type: "input_text", text: null }] }] }, "input[0].content[0].text"],
    ];
    for (const [path, json, param] of cases) {
      const { res } = await call(path, { json }, models);
      const body = await res.json<any>();
      expect(res.status, path).toBe(400);
      expect(body.error, path).toMatchObject({ code: "invalid_type", param });
    }
    for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
      const { res } = await call(path, { json: { model: "m", max_tokens: 8, messages: [{ role: "user", content: [{ type: "text", text: 5 }] }] } }, models);
      const body = await res.json<any>();
      expect(res.status, path).toBe(400);
      expect(body.error.type, path).toBe("invalid_request_error");
      expect(body.error.message, path).toContain("messages[0].content[0].text must be a string");
    }
    expect((await received()).length).toBe(before);
  });
});

describe("?since= on the usage routes", () => {
  it("is a real calendar day YYYY-MM-DD, else 400 invalid_value naming since", async () => {
    const vars = keyedVars(models);
    const key = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const admin = { authorization: `Bearer ${vars.ADMIN_TOKEN}` };
    const own = { authorization: `Bearer ${key.key}` };
    for (const [path, headers] of [["/v1/usage", own], ["/v1/admin/usage", admin]] as const) {
      for (const since of ["2026-13-45", "2026-02-30", "2026-1-01", "yesterday", ""]) {
        const { res } = await call(`${path}?since=${encodeURIComponent(since)}`, { headers }, vars);
        expect(res.status, `${path}?since=${since}`).toBe(400);
        expect((await res.json<any>()).error, `${path}?since=${since}`).toMatchObject({ code: "invalid_value", param: "since" });
      }
      const twice = await call(`${path}?since=2026-01-01&since=2026-01-02`, { headers }, vars);
      expect(twice.res.status).toBe(400);
      const leap = await call(`${path}?since=2028-02-29`, { headers }, vars);
      expect(leap.res.status).toBe(200);
      expect((await leap.res.json<any>()).since).toBe("2028-02-29");
      const all = await call(path, { headers }, vars);
      expect(all.res.status).toBe(200);
    }
    const emptyKey = await call(`/v1/admin/usage?key=`, { headers: admin }, vars);
    expect(emptyKey.res.status).toBe(400);
    expect((await emptyKey.res.json<any>()).error).toMatchObject({ code: "invalid_value", param: "key" });
  });
});
