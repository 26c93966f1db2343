import { describe, expect, it } from "vitest";
import { call, configWith, createKey, FIXTURE_URL, keyedVars } from "./harness.ts";

// A credential counts only as `Authorization: Bearer <key>` or `x-api-key: <key>`: the key itself as
// the whole Authorization (or after another scheme) fails like a wrong key, everywhere.

const models = configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hi` }] } });

describe("an Authorization that is not Bearer", () => {
  it("is 401 invalid_api_key on API routes, however right the key; Bearer and x-api-key still work", async () => {
    const vars = keyedVars(models);
    const key = await createKey(vars, { name: "alice", scopes: ["chat"] });
    for (const path of ["/v1/models", "/v1/usage"]) {
      for (const authorization of [key.key, `Token ${key.key}`, `Basic ${key.key}`]) {
        const { res } = await call(path, { headers: { authorization } }, vars);
        expect(res.status, `${path} ${authorization.slice(0, 6)}`).toBe(401);
        const error = (await res.json<any>()).error;
        expect(error.code).toBe("invalid_api_key");
        expect(error.message).toContain("Authorization: Bearer <key>");
      }
      // A malformed Authorization is not rescued by an x-api-key beside it.
      const both = await call(path, { headers: { authorization: key.key, "x-api-key": key.key } }, vars);
      expect(both.res.status).toBe(401);
      expect((await call(path, { headers: { authorization: `Bearer ${key.key}` } }, vars)).res.status, path).toBe(200);
      expect((await call(path, { headers: { "x-api-key": key.key } }, vars)).res.status, path).toBe(200);
    }
    const messages = await call("/v1/messages/count_tokens", { json: { model: "m", messages: [{ role: "user", content: "hi" }] }, headers: { authorization: key.key } }, vars);
    expect(messages.res.status).toBe(401);
    expect((await messages.res.json<any>()).error.type).toBe("authentication_error");
    const anthropic = await call("/v1/messages/count_tokens", { json: { model: "m", messages: [{ role: "user", content: "hi" }] }, headers: { "x-api-key": key.key } }, vars);
    expect(anthropic.res.status).toBe(200);
  });

  it("fails for the admin token and the serve token too", async () => {
    const vars = keyedVars({ ...models, SERVE_TOKEN: `serve-${crypto.randomUUID()}` });
    const admin = await call("/v1/admin/keys", { headers: { authorization: vars.ADMIN_TOKEN } }, vars);
    expect(admin.res.status).toBe(401);
    expect((await admin.res.json<any>()).error.code).toBe("invalid_api_key");
    expect((await call("/v1/admin/keys", { headers: { authorization: `Bearer ${vars.ADMIN_TOKEN}` } }, vars)).res.status).toBe(200);
    const serve = await call("/v1/sessions/ticket", { method: "POST", headers: { authorization: String(vars.SERVE_TOKEN) } }, vars);
    expect(serve.res.status).toBe(403);
    expect((await serve.res.json<any>()).error.code).toBe("invalid_serve_key");
    const bearer = await call("/v1/sessions/ticket", { method: "POST", headers: { authorization: `Bearer ${vars.SERVE_TOKEN}` } }, vars);
    expect(bearer.res.status).not.toBe(401);
    expect(bearer.res.status).not.toBe(403);
  });
});
