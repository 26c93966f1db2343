import { describe, expect, it } from "vitest";
// @ts-expect-error: plain JS module without types
import { FakeEngine } from "../fakes/fake-web-llm.mjs";
import { FakeSession, type Msg } from "../fakes/fake-session.ts";
import { FIXTURE_URL, LLAMA_URL, call, configWith, createKey, grammar, keyedVars, readSse } from "./harness.ts";

// The browser data policy (docs/security.md, "Browser sessions and prompts"): a key whose requests
// may not be served by a teammate's tab never reaches one — no relay, no place in the hub's queue —
// on every API that can reach a browser target; a serve key's `serves` decides whose requests its
// tabs take; /v1/usage says where each request was served.

const TOKEN = "serve-secret-for-policy-tests";
let n = 0;
const unique = (kind = "Fake") => `${kind}-policy-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f32_1-MLC`;
// A long commit grace: the tests read who served from the x-switchyard-target header, which a response
// committed before its first event (a loaded machine) goes without.
const timeouts = { timeouts: { commitMs: 3000, heartbeatMs: 100 } };

type Vars = ReturnType<typeof keyedVars>;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** A serving page connected with `credential` (a serve key or SERVE_TOKEN) in the deployment `vars`. */
async function connect(vars: Record<string, unknown>, credential: string, models: string[], capabilities: Msg = {}, engine?: unknown) {
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", ...bearer(credential) } }, vars);
  if (res.status !== 101) throw new Error(`connect: ${res.status} ${await res.text()}`);
  const s = new FakeSession(res.webSocket!, engine ? { engine } : {});
  await s.hello(models, 1, capabilities);
  return s;
}

/** The same, through a one-use ticket (what the bundled page does). */
async function connectWithTicket(vars: Record<string, unknown>, credential: string, models: string[]) {
  const t = await call("/v1/sessions/ticket", { method: "POST", headers: bearer(credential) }, vars);
  expect(t.res.status).toBe(200);
  const { ticket } = await t.res.json<{ ticket: string }>();
  const { res } = await call(`/v1/sessions?ticket=${ticket}`, { headers: { upgrade: "websocket" } }, vars);
  expect(res.status).toBe(101);
  const s = new FakeSession(res.webSocket!);
  await s.hello(models);
  return s;
}

const embeddingEngine = (model: string) => new FakeEngine({ tokenDelayMs: 2, appConfig: { model_list: [{ model_id: model, model_type: 1 }] } });
/** What reached the page: relayed requests, and the queue notes that come with any request the hub placed there. */
const reached = (s: FakeSession) => s.inbox.filter((m) => m.type === "request" || m.type === "queue");
const settle = () => new Promise((r) => setTimeout(r, 150));

/** One request on each API that can reach a browser target; the answer's status, target and body. */
async function everyApi(vars: Record<string, unknown>, headers: Record<string, string>, models: { chat: string; completions: string; embeddings: string }) {
  const chatBody = (content: string) => ({ model: models.chat, messages: [{ role: "user", content }] });
  type Api = "chat" | "responses" | "messages" | "completions" | "embeddings";
  const asks: Array<[Api, string, unknown]> = [
    ["chat", "/v1/chat/completions", { ...chatBody("echo: chat"), stream: true }],
    ["responses", "/v1/responses", { model: models.chat, input: "echo: responses" }],
    ["messages", "/v1/messages", { ...chatBody("echo: messages"), max_tokens: 20 }],
    ["completions", "/v1/completions", { model: models.completions, prompt: "echo: completions", max_tokens: 30, grammar: grammar(" from llama") }],
    ["embeddings", "/v1/embeddings", { model: models.embeddings, input: "embed me", encoding_format: "float" }],
  ];
  const out = {} as Record<Api, { status: number; target: string | null; body: any }>;
  for (const [api, path, json] of asks) {
    const { res, done } = await call(path, { json, headers }, vars);
    const text = await res.text();
    await done();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {}
    out[api] = { status: res.status, target: res.headers.get("x-switchyard-target"), body };
  }
  return out;
}

describe("a denied key never reaches a browser session", () => {
  it("chat, responses, messages, completions and embeddings fail over to the llama target; an allowed key is served by the tab", async () => {
    const B = unique();
    const E = unique("snowflake-arctic-embed-s");
    // The browser target comes first: only the policy keeps a denied request from it.
    const vars = keyedVars({
      ...configWith(
        {
          m: { targets: [{ kind: "browser", model: B }, { kind: "llama", url: `${FIXTURE_URL}/behave/say/From%20llama` }] },
          c: { targets: [{ kind: "browser", model: B }, { kind: "llama", url: LLAMA_URL }] },
          e: { targets: [{ kind: "browser", model: E }, { kind: "llama", url: `${FIXTURE_URL}/behave/embed` }] },
        },
        timeouts,
      ),
      SERVE_TOKEN: TOKEN,
    });
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"], browser: "deny" });
    const bob = await createKey(vars, { name: "bob", scopes: ["chat"], browser: "allow" });
    const tab = await connect(vars, TOKEN, [B], { completions: true });
    const embedder = await connect(vars, TOKEN, [E], { embeddingModels: [E] }, embeddingEngine(E));
    const models = { chat: "m", completions: "c", embeddings: "e" };

    const denied = await everyApi(vars, bearer(alice.key), models);
    for (const [api, r] of Object.entries(denied)) {
      expect(r.status, `${api}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.target, api).toMatch(/^llama:/);
    }
    expect(JSON.stringify(denied.chat.body)).toContain("From");
    expect(denied.completions.body.choices[0].text).toBe(" from llama");
    expect(denied.embeddings.body.data[0].embedding).toHaveLength(4);
    await settle();
    expect(reached(tab)).toEqual([]);
    expect(reached(embedder)).toEqual([]);

    // The same session, the same requests, a key that may use it: the tab serves every one.
    const allowed = await everyApi(vars, bearer(bob.key), models);
    for (const [api, r] of Object.entries(allowed)) {
      expect(r.status, `${api}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.target, api).toMatch(/^browser:/);
    }
    expect(tab.inbox.filter((m) => m.type === "request").map((m) => m.endpoint ?? "chat")).toEqual(["chat", "chat", "chat", "completions"]);
    expect(embedder.inbox.filter((m) => m.type === "request").map((m) => m.endpoint)).toEqual(["embeddings"]);
    tab.ws.close();
    embedder.ws.close();
  });

  it("a model only browser sessions serve: 403 browser_not_allowed on every API, in its own error shape, and nothing reaches the tab", async () => {
    const B = unique();
    const E = unique("snowflake-arctic-embed-s");
    const vars = keyedVars({
      ...configWith({ m: { targets: [{ kind: "browser", model: B }] }, e: { targets: [{ kind: "browser", model: E }] } }, timeouts),
      SERVE_TOKEN: TOKEN,
    });
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"], browser: "deny" });
    const tab = await connect(vars, TOKEN, [B], { completions: true });
    const embedder = await connect(vars, TOKEN, [E], { embeddingModels: [E] }, embeddingEngine(E));

    const denied = await everyApi(vars, bearer(alice.key), { chat: "m", completions: "m", embeddings: "e" });
    for (const [api, r] of Object.entries(denied)) {
      expect(r.status, `${api}: ${JSON.stringify(r.body)}`).toBe(403);
      if (api === "messages") expect(r.body).toMatchObject({ type: "error", error: { type: "permission_error" } });
      else expect(r.body.error, api).toMatchObject({ code: "browser_not_allowed", type: "permission_error", param: "model" });
      expect(JSON.stringify(r.body), api).toContain('The key \\"alice\\" may not be served by browser sessions');
    }
    await settle();
    expect(reached(tab)).toEqual([]);
    expect(reached(embedder)).toEqual([]);
    // GET /v1/models does not offer it either, and GET /v1/models/m says why.
    const list = await call("/v1/models", { headers: bearer(alice.key) }, vars);
    expect((await list.res.json<any>()).data).toEqual([]);
    const one = await call("/v1/models/m", { headers: bearer(alice.key) }, vars);
    expect(one.res.status).toBe(403);
    tab.ws.close();
    embedder.ws.close();
  });

  it("browser.default decides for keys that do not say and for requests without a key; a key's own allow wins", async () => {
    const B = unique();
    const models = { m: { targets: [{ kind: "browser", model: B }] } };
    const denyAll = { ...configWith(models, { ...timeouts, browser: { default: "deny" } }), SERVE_TOKEN: TOKEN };
    const tab = await connect(denyAll, TOKEN, [B]);
    const ask = { model: "m", messages: [{ role: "user", content: "echo: hi" }] };

    // Open mode (dev, no keys): the default applies to every request.
    const open = await call("/v1/chat/completions", { json: ask }, denyAll);
    expect(open.res.status).toBe(403);
    expect((await open.res.json<any>()).error.message).toContain("Requests without a key");

    const keyed = keyedVars(denyAll);
    const plain = await createKey(keyed, { name: "plain", scopes: ["chat"] });
    const allowed = await createKey(keyed, { name: "allowed", scopes: ["chat"], browser: "allow" });
    const r1 = await call("/v1/chat/completions", { json: ask, headers: bearer(plain.key) }, keyed);
    expect(r1.res.status).toBe(403);
    expect((await r1.res.json<any>()).error.message).toContain("browser.default");
    await settle();
    expect(reached(tab)).toEqual([]);
    const r2 = await call("/v1/chat/completions", { json: ask, headers: bearer(allowed.key) }, keyed);
    expect(r2.res.status).toBe(200);
    expect((await r2.res.json<any>()).choices[0].message.content).toBe("hi");
    expect(tab.inbox.filter((m) => m.type === "request")).toHaveLength(1);
    tab.ws.close();
  });

  it("deployed, the default is deny: a key that does not say is not served by a tab", async () => {
    const B = unique();
    const vars = keyedVars({ ...configWith({ m: { targets: [{ kind: "browser", model: B }] } }, timeouts), SERVE_TOKEN: TOKEN, SWITCHYARD_ENV: "" });
    const key = await createKey(vars, { name: "plain", scopes: ["chat"] });
    const tab = await connect(vars, TOKEN, [B]);
    const { res } = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "echo: hi" }] }, headers: bearer(key.key) }, vars);
    expect(res.status).toBe(403);
    expect((await res.json<any>()).error.code).toBe("browser_not_allowed");
    await settle();
    expect(reached(tab)).toEqual([]);
    tab.ws.close();
  });

  it("PATCH /v1/admin/keys/{id} turns a key's policy around; the key record shows it", async () => {
    const B = unique();
    const vars = keyedVars({ ...configWith({ m: { targets: [{ kind: "browser", model: B }] } }, timeouts), SERVE_TOKEN: TOKEN });
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
    expect(alice).toMatchObject({ browser: null, serves: null });
    const tab = await connect(vars, TOKEN, [B]);
    const ask = () => call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "echo: ok" }] }, headers: bearer(alice.key) }, vars);
    const admin = { authorization: `Bearer ${vars.ADMIN_TOKEN}` };

    expect((await ask()).res.status).toBe(200); // dev: the default is allow
    const patched = await call(`/v1/admin/keys/${alice.id}`, { method: "PATCH", json: { browser: "deny" }, headers: admin }, vars);
    expect(patched.res.status).toBe(200);
    expect(await patched.res.json()).toMatchObject({ id: alice.id, browser: "deny", serves: null });
    expect((await ask()).res.status).toBe(403);
    const back = await call(`/v1/admin/keys/${alice.id}`, { method: "PATCH", json: { browser: null }, headers: admin }, vars);
    expect((await back.res.json<any>()).browser).toBeNull();
    expect((await ask()).res.status).toBe(200);
    expect(tab.inbox.filter((m) => m.type === "request")).toHaveLength(2);

    const bad = await call(`/v1/admin/keys/${alice.id}`, { method: "PATCH", json: { browser: "sometimes" }, headers: admin }, vars);
    expect(bad.res.status).toBe(400);
    const notServe = await call(`/v1/admin/keys/${alice.id}`, { method: "PATCH", json: { serves: ["alice"] }, headers: admin }, vars);
    expect(notServe.res.status).toBe(400);
    expect((await notServe.res.json<any>()).error.param).toBe("serves");
    const unknown = await call("/v1/admin/keys/key_nope", { method: "PATCH", json: { browser: "deny" }, headers: admin }, vars);
    expect(unknown.res.status).toBe(404);
    const noAdmin = await call(`/v1/admin/keys/${alice.id}`, { method: "PATCH", json: { browser: "allow" }, headers: bearer(alice.key) }, vars);
    expect(noAdmin.res.status).toBe(403);
    tab.ws.close();
  });
});

describe("a serve key's serves: whose requests its tabs take", () => {
  it("a tab connected with a serve key that serves alice gets alice's requests and never bob's; a SERVE_TOKEN tab serves bob", async () => {
    const B = unique();
    const vars = keyedVars({ ...configWith({ m: { targets: [{ kind: "browser", model: B }] } }, timeouts), SERVE_TOKEN: TOKEN });
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const bob = await createKey(vars, { name: "bob", scopes: ["chat"] });
    // By name or by id; stored as ids.
    const laptop = await createKey(vars, { name: "laptop", scopes: ["serve"], serves: ["alice"] });
    expect(laptop).toMatchObject({ serves: [alice.id] });
    const tab = await connectWithTicket(vars, laptop.key, [B]);
    const ask = (key: string, content: string) => call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content }] }, headers: bearer(key) }, vars);
    const requests = (s: FakeSession) => s.inbox.filter((m) => m.type === "request").map((m) => m.body.messages.at(-1).content);

    const a = await ask(alice.key, "echo: for alice");
    expect(a.res.status).toBe(200);
    expect((await a.res.json<any>()).choices[0].message.content).toBe("for alice");
    // No session may serve bob: 503 no_capacity, as with no session at all (a next target would be tried).
    const b = await ask(bob.key, "echo: for bob");
    expect(b.res.status).toBe(503);
    expect(b.res.headers.get("retry-after")).toBe("5");
    const err = await b.res.json<any>();
    expect(err.error.code).toBe("no_capacity");
    expect(err.error.message).toContain("may serve this request");
    expect(requests(tab)).toEqual(["echo: for alice"]);

    const everyone = await connect(vars, TOKEN, [B]);
    const b2 = await ask(bob.key, "echo: bob again");
    expect(b2.res.status).toBe(200);
    expect(requests(everyone)).toEqual(["echo: bob again"]);
    expect(requests(tab)).toEqual(["echo: for alice"]);

    // The admin switches the laptop to bob: its live session follows at once.
    everyone.ws.close();
    await everyone.waitClosed();
    const admin = { authorization: `Bearer ${vars.ADMIN_TOKEN}` };
    const patched = await call(`/v1/admin/keys/${laptop.id}`, { method: "PATCH", json: { serves: [bob.id] }, headers: admin }, vars);
    expect((await patched.res.json<any>()).serves).toEqual([bob.id]);
    expect((await ask(alice.key, "echo: alice later")).res.status).toBe(503);
    expect((await ask(bob.key, "echo: bob on the laptop")).res.status).toBe(200);
    expect(requests(tab)).toEqual(["echo: for alice", "echo: bob on the laptop"]);

    // Revoking the serve key closes its session.
    const revoked = await call(`/v1/admin/keys/${laptop.id}`, { method: "DELETE", headers: admin }, vars);
    expect(revoked.res.status).toBe(200);
    expect(await tab.waitClosed()).toMatchObject({ code: 4403 });
    expect((await ask(bob.key, "echo: nobody")).res.status).toBe(503);
  });

  it("a request no session may serve fails over to the next target", async () => {
    const B = unique();
    const vars = keyedVars({
      ...configWith({ m: { targets: [{ kind: "browser", model: B }, { kind: "llama", url: `${FIXTURE_URL}/behave/say/From%20llama` }] } }, timeouts),
      SERVE_TOKEN: TOKEN,
    });
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const bob = await createKey(vars, { name: "bob", scopes: ["chat"] });
    const laptop = await createKey(vars, { name: "laptop", scopes: ["serve"], serves: [alice.id] });
    const tab = await connect(vars, laptop.key, [B]);
    const { res } = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "echo: x" }] }, headers: bearer(bob.key) }, vars);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-target")).toMatch(/^llama:/);
    expect(res.headers.get("x-switchyard-attempts")).toBe("2");
    await settle();
    expect(reached(tab)).toEqual([]);
    tab.ws.close();
  });

  it("browser.serveTokenServes restricts the tabs connected with SERVE_TOKEN", async () => {
    const B = unique();
    const base = keyedVars({ SERVE_TOKEN: TOKEN });
    const alice = await createKey(base, { name: "alice", scopes: ["chat"] });
    const bob = await createKey(base, { name: "bob", scopes: ["chat"] });
    const vars = { ...base, ...configWith({ m: { targets: [{ kind: "browser", model: B }] } }, { ...timeouts, browser: { serveTokenServes: [alice.id] } }) };
    const tab = await connect(vars, TOKEN, [B]);
    const ask = (key: string) => call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "echo: hi" }] }, headers: bearer(key) }, vars);
    expect((await ask(alice.key)).res.status).toBe(200);
    expect((await ask(bob.key)).res.status).toBe(503);
    expect(tab.inbox.filter((m) => m.type === "request")).toHaveLength(1);
    tab.ws.close();
  });

  it("serves must name active keys, and only a serve key has it", async () => {
    const vars = keyedVars();
    const admin = { authorization: `Bearer ${vars.ADMIN_TOKEN}` };
    const create = async (body: Record<string, unknown>) => {
      const { res } = await call("/v1/admin/keys", { json: body, headers: admin }, vars);
      return { status: res.status, body: await res.json<any>() };
    };
    const unknown = await create({ name: "laptop", scopes: ["serve"], serves: ["nobody"] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: "invalid_value", param: "serves" });
    const chatOnly = await create({ name: "x", scopes: ["chat"], serves: ["nobody"] });
    expect(chatOnly.status).toBe(400);
    expect(chatOnly.body.error.message).toContain("no serve scope");
    const listed = await call("/v1/admin/keys", { headers: admin }, vars);
    expect((await listed.res.json<any>()).data).toEqual([]);
  });
});

describe("/v1/usage: where a key's requests were served", () => {
  it("per backend, each with its kind: the llama-server and the browser session", async () => {
    const B = unique();
    const vars = keyedVars({
      ...configWith(
        {
          tab: { targets: [{ kind: "browser", model: B }] },
          gpu: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/From%20llama` }] },
        },
        timeouts,
      ),
      SERVE_TOKEN: TOKEN,
    });
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const tab = await connect(vars, TOKEN, [B]);
    for (const model of ["tab", "gpu", "gpu"]) {
      const { res, done } = await call("/v1/chat/completions", { json: { model, messages: [{ role: "user", content: "echo: counted" }], stream: true }, headers: bearer(alice.key) }, vars);
      expect(res.status).toBe(200);
      await readSse(res);
      await done();
    }
    const { res } = await call("/v1/usage", { headers: bearer(alice.key) }, vars);
    const usage = await res.json<any>();
    expect(usage.key).toMatchObject({ id: alice.id, browser: null });
    expect(usage.by_backend).toEqual([
      expect.objectContaining({ backend: `browser:${B}`, kind: "browser", requests: 1 }),
      expect.objectContaining({ backend: expect.stringMatching(/^llama:/), kind: "llama", requests: 2 }),
    ]);
    expect(usage.usage.find((r: any) => r.model === "tab")).toMatchObject({ backend: `browser:${B}`, kind: "browser" });
    expect(usage.totals.requests).toBe(3);
    tab.ws.close();
  });
});
