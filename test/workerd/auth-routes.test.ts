import { describe, expect, it } from "vitest";
import { call, configWith, createKey, FIXTURE_URL, keyedVars } from "./harness.ts";

// Every API route without a key, with a revoked key, with a key lacking the scope or the model.

const models = configWith({
  m1: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hi` }] },
  m2: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hi` }] },
});

const chat = (model = "m1") => ({ model, messages: [{ role: "user", content: "hi" }] });

/** Each chat-scoped route, as [name, path, init]. */
const ROUTES: Array<[string, string, RequestInit & { json?: unknown }]> = [
  ["chat", "/v1/chat/completions", { json: chat() }],
  ["chat (no /v1)", "/chat/completions", { json: chat() }],
  ["responses", "/v1/responses", { json: { model: "m1", input: "hi" } }],
  ["messages", "/v1/messages", { json: { model: "m1", max_tokens: 16, messages: [{ role: "user", content: "hi" }] } }],
  ["completions", "/v1/completions", { json: { model: "m1", prompt: "hi" } }],
  ["embeddings", "/v1/embeddings", { json: { model: "m1", input: "hi" } }],
  ["models", "/v1/models", {}],
  ["model", "/v1/models/m1", {}],
  ["tool_calls/rewrite", "/v1/tool_calls/rewrite", { json: { tools: [], text: "hi" } }],
  ["usage", "/v1/usage", {}],
];

const withKey = (init: RequestInit & { json?: unknown }, key: string, header: "authorization" | "x-api-key" = "authorization") => ({
  ...init,
  headers: { ...(init.headers as Record<string, string>), [header]: header === "authorization" ? `Bearer ${key}` : key },
});

async function errorCode(res: Response): Promise<string> {
  const body = await res.json<any>();
  return body.error?.code ?? body.error?.type;
}

describe("secure defaults", () => {
  it("dev with no keys: serves without keys, ignores any Authorization, and says so on /health", async () => {
    const vars = keyedVars(models);
    const health = await call("/health", {}, vars);
    expect(await health.res.json()).toEqual({ status: "ok", auth: "open", note: "dev mode with no API keys: serving without keys" });
    const none = await call("/v1/chat/completions", { json: chat() }, vars);
    expect(none.res.status).toBe(200);
    const junk = await call("/v1/chat/completions", withKey({ json: chat() }, "sk-whatever"), vars);
    expect(junk.res.status).toBe(200);
  });

  it("deployed with no keys: 403 naming the fix on every API route; OPEN_MODE serves; /health is status only", async () => {
    const vars = keyedVars({ ...models, SWITCHYARD_ENV: "", LLAMA_URL: "https://llama.example.com", SWITCHYARD_CONFIG: JSON.stringify({}) });
    for (const [name, path, init] of ROUTES.filter(([n]) => n !== "usage")) {
      const { res } = await call(path, init, vars);
      expect(res.status, name).toBe(403);
      const body = await res.json<any>();
      const message = body.error.message as string;
      expect(message, name).toContain("wrangler secret put ADMIN_TOKEN");
      expect(message, name).toContain("OPEN_MODE");
    }
    const health = await call("/health", {}, vars);
    expect(await health.res.json()).toEqual({ status: "ok", auth: "locked" });
    const open = await call("/v1/tool_calls/rewrite", { json: { tools: [], text: "hi" } }, { ...vars, OPEN_MODE: "1" });
    expect(open.res.status).toBe(200);
  });

  it("admin with neither ADMIN_TOKEN nor an admin key: 403 naming wrangler secret put ADMIN_TOKEN", async () => {
    const vars = { ...keyedVars(), ADMIN_TOKEN: "" };
    for (const init of [{}, { headers: { authorization: "Bearer guess" } }]) {
      const { res } = await call("/v1/admin/keys", init, vars);
      expect(res.status).toBe(403);
      expect((await res.json<any>()).error.message).toContain("wrangler secret put ADMIN_TOKEN");
    }
  });
});

describe("keys on every route", () => {
  it("401 without a key, 401 with a revoked or unknown key, 403 without the scope, 403 for a model outside the allow-list", async () => {
    const vars = keyedVars(models);
    const chatKey = await createKey(vars, { name: "alice", scopes: ["chat"], models: ["m1"] });
    const serveOnly = await createKey(vars, { name: "page", scopes: ["serve"] });
    const revoked = await createKey(vars, { name: "gone", scopes: ["chat", "serve", "admin"] });
    const rev = await call(`/v1/admin/keys/${revoked.id}`, { method: "DELETE", headers: { authorization: `Bearer ${vars.ADMIN_TOKEN}` } }, vars);
    expect(rev.res.status).toBe(200);
    expect((await rev.res.json<any>()).revoked_at).not.toBeNull();

    for (const [name, path, init] of ROUTES) {
      const ip = { "cf-connecting-ip": `198.51.100.${ROUTES.findIndex(([n]) => n === name)}` };
      const none = await call(path, { ...init, headers: ip }, vars);
      expect(none.res.status, `${name} without a key`).toBe(401);
      const gone = await call(path, withKey({ ...init, headers: ip }, revoked.key), vars);
      expect(gone.res.status, `${name} with a revoked key`).toBe(401);
      const unknown = await call(path, withKey({ ...init, headers: ip }, "sy-" + "A".repeat(43)), vars);
      expect(unknown.res.status, `${name} with an unknown key`).toBe(401);
      if (name !== "usage") {
        const scope = await call(path, withKey({ ...init, headers: ip }, serveOnly.key), vars);
        expect(scope.res.status, `${name} without the chat scope`).toBe(403);
        expect(await errorCode(scope.res)).toMatch(/insufficient_scope|permission_error/);
      }
      const ok = await call(path, withKey({ ...init, headers: ip }, chatKey.key), vars);
      expect(ok.res.status, `${name} with a chat key`).not.toBe(401);
      expect(ok.res.status, `${name} with a chat key`).not.toBe(403);
      await ok.done();
    }

    // The model allow-list, on every route that names a model.
    for (const [name, path, init] of ROUTES.filter(([, , i]) => (i.json as any)?.model)) {
      const json = { ...(init.json as object), model: "m2" };
      const { res } = await call(path, withKey({ json }, chatKey.key), vars);
      expect(res.status, `${name} with a model outside the allow-list`).toBe(403);
      expect(await errorCode(res), name).toMatch(/model_not_allowed|permission_error/);
    }
    const m2 = await call("/v1/models/m2", withKey({}, chatKey.key), vars);
    expect(m2.res.status).toBe(403);
    const list = await call("/v1/models", withKey({}, chatKey.key), vars);
    expect((await list.res.json<any>()).data.map((m: any) => m.id)).toEqual(["m1"]);
    // Anthropic's list shape names its ends: they are the filtered list's.
    const anthropicList = await call("/v1/models", withKey({ headers: { "anthropic-version": "2023-06-01" } }, chatKey.key), vars);
    expect(await anthropicList.res.json<any>()).toMatchObject({ data: [{ id: "m1", type: "model" }], first_id: "m1", last_id: "m1" });
  });

  it("x-api-key works like Bearer (Anthropic clients), and /v1/messages errors keep Anthropic's shape", async () => {
    const vars = keyedVars(models);
    const key = await createKey(vars, { name: "claude-code", scopes: ["chat"] });
    const body = { model: "m1", max_tokens: 16, messages: [{ role: "user", content: "hi" }] };
    const ok = await call("/v1/messages", withKey({ json: body, headers: { "anthropic-version": "2023-06-01" } }, key.key, "x-api-key"), vars);
    expect(ok.res.status).toBe(200);
    expect((await ok.res.json<any>()).type).toBe("message");
    const none = await call("/v1/messages", { json: body, headers: { "cf-connecting-ip": "192.0.2.77" } }, vars);
    expect(none.res.status).toBe(401);
    expect(await none.res.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    const count = await call("/v1/messages/count_tokens", { json: body, headers: { "cf-connecting-ip": "192.0.2.77" } }, vars);
    expect(count.res.status).toBe(401);
    expect(await count.res.json()).toMatchObject({ type: "error", error: { type: "authentication_error" } });
  });

  it("browser sessions: a serve key gets a ticket, a chat key gets 403, no key 401; SERVE_TOKEN still works", async () => {
    const vars = keyedVars({ ...models, SERVE_TOKEN: "serve-secret-fallback" });
    const serve = await createKey(vars, { name: "page", scopes: ["serve"] });
    const chatKey = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const ticket = await call("/v1/sessions/ticket", withKey({ method: "POST" }, serve.key), vars);
    expect(ticket.res.status).toBe(200);
    expect((await ticket.res.json<any>()).ticket).toBeTruthy();
    const noScope = await call("/v1/sessions/ticket", withKey({ method: "POST" }, chatKey.key), vars);
    expect(noScope.res.status).toBe(403);
    const none = await call("/v1/sessions/ticket", { method: "POST" }, vars);
    expect(none.res.status).toBe(401);
    const token = await call("/v1/sessions/ticket", withKey({ method: "POST" }, "serve-secret-fallback"), vars);
    expect(token.res.status).toBe(200);
    const socket = await call("/v1/sessions", withKey({ headers: { upgrade: "websocket" } }, chatKey.key), vars);
    expect(socket.res.status).toBe(403);
    const ws = await call("/v1/sessions", withKey({ headers: { upgrade: "websocket" } }, serve.key), vars);
    expect(ws.res.status).toBe(101);
    ws.res.webSocket!.accept();
    ws.res.webSocket!.close();
    // Even in dev with no keys, anonymous serving is refused.
    const anon = await call("/v1/sessions/ticket", { method: "POST" }, keyedVars(models));
    expect(anon.res.status).toBe(401);
  });

  it("admin: ADMIN_TOKEN or an admin key; the key is shown once and never listed", async () => {
    const vars = keyedVars(models);
    const admin = await createKey(vars, { name: "ops", scopes: ["admin"] });
    expect(admin.key).toMatch(/^sy-[A-Za-z0-9_-]{43}$/);
    const viaKey = await call("/v1/admin/keys", withKey({}, admin.key), vars);
    expect(viaKey.res.status).toBe(200);
    const listed = await viaKey.res.text();
    expect(listed).not.toContain(admin.key);
    expect(JSON.parse(listed).data[0]).toMatchObject({ id: admin.id, name: "ops", scopes: ["admin"], revoked_at: null });
    const chatKey = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const noScope = await call("/v1/admin/keys", withKey({}, chatKey.key), vars);
    expect(noScope.res.status).toBe(403);
    const bad = await call("/v1/admin/keys", { json: { name: "x", scopes: ["root"] }, headers: { authorization: `Bearer ${vars.ADMIN_TOKEN}` } }, vars);
    expect(bad.res.status).toBe(400);
    const missing = await call("/v1/admin/keys/key_nope", { method: "DELETE", headers: { authorization: `Bearer ${vars.ADMIN_TOKEN}` } }, vars);
    expect(missing.res.status).toBe(404);
  });

  it("CORS: off by default; configured origins get preflight answers without a key", async () => {
    const vars = keyedVars(models);
    await createKey(vars, { name: "alice", scopes: ["chat"] });
    const pre = { method: "OPTIONS", headers: { origin: "https://app.example.com", "access-control-request-method": "POST", "access-control-request-headers": "authorization,content-type" } };
    const off = await call("/v1/chat/completions", pre, vars);
    expect(off.res.headers.get("access-control-allow-origin")).toBeNull();
    const cors = { ...vars, SWITCHYARD_CONFIG: JSON.stringify({ ...JSON.parse(models.SWITCHYARD_CONFIG), cors: { origins: ["https://app.example.com"] } }) };
    const on = await call("/v1/chat/completions", pre, cors);
    expect(on.res.status).toBe(204);
    expect(on.res.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(on.res.headers.get("access-control-allow-headers")).toContain("authorization");
    const other = await call("/v1/chat/completions", { ...pre, headers: { ...pre.headers, origin: "https://evil.example" } }, cors);
    expect(other.res.headers.get("access-control-allow-origin")).toBeNull();
    // A browser app can read who served, every target's outcome and whether a count is an estimate.
    const unauthed = await call("/v1/models", { headers: { origin: "https://app.example.com" } }, cors);
    const exposed = unauthed.res.headers.get("access-control-expose-headers") ?? "";
    for (const h of ["x-request-id", "x-switchyard-target", "x-switchyard-attempts", "x-switchyard-outcomes", "x-switchyard-estimate", "x-switchyard-capture", "retry-after"]) expect(exposed, h).toContain(h);
  });
});
