import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { FakeSession } from "../fakes/fake-session.ts";
import { call, configWith, createKey, FIXTURE_URL } from "../workerd/harness.ts";
import { deeplyNested, deployment, expectSafe, expectStillServes, hostileBytes, hostileJson, mutated, params, pollutingKey, RUNS, SECRETS, SEED, send, sent } from "./fuzz-support.ts";

let relayMessages = 0;
afterAll(() => console.log(`[fuzz] seed ${SEED}, ${RUNS} runs a property: ${sent.requests} HTTP requests and ${relayMessages} relay messages generated`));

// Property-based: every public endpoint, the admin API and the relay socket, fed malformed JSON,
// wrong types, huge and deeply nested bodies, prototype-polluting keys, non-UTF-8, odd headers and
// methods. The invariant (fuzz-support.ts): a 4xx envelope with a documented code, never a 5xx,
// never a secret, and the next good request still served.

const json = { "content-type": "application/json" };
const admin = { ...json, authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` };

/** Each POST endpoint with a body it accepts. */
const ROUTES: Array<{ path: string; valid: Record<string, unknown>; headers?: Record<string, string>; vars?: Record<string, unknown> }> = [
  { path: "/v1/chat/completions", valid: { model: "m", messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], stream: false, max_tokens: 8, tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "string" } } } } }] } },
  { path: "/v1/responses", valid: { model: "m", input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }, { type: "function_call", call_id: "c1", name: "f", arguments: "{}" }, { type: "function_call_output", call_id: "c1", output: "x" }], instructions: "be brief", store: false, tools: [{ type: "function", name: "f", parameters: { type: "object" } }, { type: "namespace", name: "ns", tools: [{ type: "function", name: "g" }] }, { type: "web_search" }] } },
  { path: "/v1/responses/compact", valid: { model: "m", input: "hi" } },
  { path: "/v1/messages", valid: { model: "m", max_tokens: 16, system: [{ type: "text", text: "s" }], messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }, { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: { a: 1 } }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "ok" }] }], tools: [{ name: "f", input_schema: { type: "object" } }] }, headers: { "anthropic-version": "2023-06-01" } },
  { path: "/v1/messages/count_tokens", valid: { model: "m", messages: [{ role: "user", content: "hi" }] }, headers: { "anthropic-version": "2023-06-01" } },
  { path: "/v1/completions", valid: { model: "m", prompt: "hi", max_tokens: 4 } },
  { path: "/v1/embeddings", valid: { model: "m", input: ["a", "b"] }, vars: configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/embed` }] } }) },
  { path: "/v1/tool_calls/rewrite", valid: { tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }], text: '<tool_call>{"name":"f","arguments":{}}</tool_call>' } },
  { path: "/v1/admin/keys", valid: { name: "fuzz", scopes: ["chat"], models: ["m"], limits: { rpm: 5 } }, headers: admin },
];

const varsFor = (route: (typeof ROUTES)[number]) => deployment(route.vars ?? {});

describe("fuzz: request bodies", () => {
  for (const route of ROUTES) {
    it(`${route.path}: any JSON value, and the valid body with one field made hostile`, async () => {
      const vars = varsFor(route);
      const headers = { ...json, ...route.headers };
      await fc.assert(
        fc.asyncProperty(fc.oneof(hostileJson, mutated(route.valid)), async (body) => {
          expectSafe(await send(route.path, { method: "POST", headers, body: JSON.stringify(body) }, vars), `${route.path} ${JSON.stringify(body).slice(0, 200)}`);
        }),
        params(),
      );
      // The same endpoint still answers its good request, and chat still serves.
      const good = await send(route.path, { method: "POST", headers, body: JSON.stringify(route.valid) }, vars);
      expect(good.status, good.text.slice(0, 300)).toBeLessThan(300);
      // (Keys the admin route created put the deployment in keyed mode: chat then needs one.)
      if (!route.vars && route.path !== "/v1/admin/keys") await expectStillServes(vars);
    });
  }

  it("every POST endpoint: bytes that are not UTF-8 or not JSON, and odd content types", async () => {
    const vars = deployment();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ROUTES), hostileBytes, fc.constantFrom("application/json", "text/plain", "", "application/json; charset=latin1", "multipart/form-data; boundary=x"), async (route, bytes, type) => {
        const body = typeof bytes === "string" ? bytes : bytes;
        const headers: Record<string, string> = { ...route.headers };
        if (type) headers["content-type"] = type;
        expectSafe(await send(route.path, { method: "POST", headers, body }, varsFor(route)), `${route.path} ${type} ${String(bytes).slice(0, 60)}`);
      }),
      params(),
    );
    await expectStillServes(vars);
  });

  it("huge and deeply nested bodies: 413 over the limit, a 4xx (or an answer) for nesting, never a 5xx", async () => {
    const vars = deployment({ SWITCHYARD_CONFIG: JSON.stringify({ ...JSON.parse(String(deployment().SWITCHYARD_CONFIG)), limits: { maxBodyBytes: 64 * 1024 } }) });
    const cases: fc.Arbitrary<string> = fc.oneof(
      fc.integer({ min: 64 * 1024 + 1, max: 200 * 1024 }).map((n) => JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(n) }] })),
      fc.tuple(fc.integer({ min: 100, max: 20_000 }), fc.constantFrom("array" as const, "object" as const)).map(([depth, kind]) => `{"model":"m","messages":[{"role":"user","content":"hi"}],"extra":${deeplyNested(depth, kind)}}`),
      fc.tuple(fc.integer({ min: 100, max: 20_000 }), fc.constantFrom("array" as const, "object" as const)).map(([depth, kind]) => `{"model":"m","messages":${deeplyNested(depth, kind)}}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ROUTES.map((r) => r.path)), cases, async (path, body) => {
        const a = await send(path, { method: "POST", headers: path === "/v1/admin/keys" ? admin : json, body }, vars);
        expectSafe(a, `${path} (${body.length} bytes)`);
      }),
      params(Math.max(20, Math.round(RUNS / 5))),
    );
    await expectStillServes(vars);
  });
});

/** Every route Switchyard serves, and a few it does not. */
const PATHS = [
  "/", "/health", "/metrics", "/status.html", "/v1/chat/completions", "/chat/completions", "/v1/models", "/v1/models/m", "/v1/models/constructor",
  "/v1/responses", "/v1/responses/resp_x", "/v1/responses/resp_x/input_items", "/v1/responses/compact", "/v1/messages", "/v1/messages/count_tokens",
  "/v1/completions", "/v1/embeddings", "/v1/tool_calls/rewrite", "/v1/sessions", "/v1/sessions/ticket", "/v1/usage", "/v1/admin/keys",
  "/v1/admin/keys/key_x", "/v1/admin/keys/key_x/revoke", "/v1/admin/usage", "/v1/admin/status", "/v1/nope", "/v2/chat/completions", "/api/hello",
];

describe("fuzz: methods, paths, query strings and headers", () => {
  it("any method on any path, with odd headers: never a 5xx, never a secret", async () => {
    const vars = deployment();
    const header = fc.oneof(
      fc.constant<[string, string]>(["authorization", "Bearer"]),
      fc.constant<[string, string]>(["authorization", SECRETS.ADMIN_TOKEN.slice(0, 20)]),
      fc.tuple(fc.constant("authorization"), fc.string({ maxLength: 40 })),
      fc.tuple(fc.constant("x-api-key"), fc.string({ maxLength: 40 })),
      fc.tuple(fc.constant("x-request-id"), fc.string({ maxLength: 200 })),
      fc.tuple(fc.constant("cf-connecting-ip"), fc.string({ maxLength: 40 })),
      fc.tuple(fc.constant("upgrade"), fc.constantFrom("websocket", "h2c", "")),
      fc.tuple(fc.constant("anthropic-version"), fc.string({ maxLength: 20 })),
      fc.tuple(fc.constant("accept"), fc.constantFrom("text/event-stream", "*/*", "application/xml")),
    );
    const printable = (s: string) => s.replace(/[^\x20-\x7e]/g, "");
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"),
        fc.oneof(fc.constantFrom(...PATHS), fc.constantFrom(...PATHS).chain((p) => fc.string({ maxLength: 12 }).map((s) => `${p}/${encodeURIComponent(s)}`))),
        fc.array(header, { maxLength: 3 }),
        fc.option(hostileJson, { nil: undefined }),
        async (method, path, headers, body) => {
          const h = new Headers();
          for (const [k, v] of headers) h.set(k, printable(v));
          const init: RequestInit = { method, headers: h };
          if (body !== undefined && method !== "GET" && method !== "HEAD") init.body = JSON.stringify(body);
          const a = await send(path, init, vars);
          if (a.status === 101) return; // a WebSocket upgrade the credentials allowed
          if (method === "HEAD" || a.status < 400 || path === "/" || path === "/status.html") {
            // No body to read (HEAD), or not an error: the status and the headers must still be safe.
            expectSafe({ ...a, status: Math.min(a.status, 399), text: method === "HEAD" ? "" : a.text }, `${method} ${path}`);
            if (a.status >= 500) throw new Error(`${method} ${path}: ${a.status}`);
            return;
          }
          expectSafe(a, `${method} ${path} ${JSON.stringify(headers)}`);
        },
      ),
      params(RUNS * 2),
    );
    await expectStillServes(vars, {}, true);
  });

  it("query parameters of the GET routes (usage, admin usage, input_items, models)", async () => {
    const vars = deployment();
    const key = await createKey(vars, { name: "fuzz-reader", scopes: ["chat"] });
    const value = fc.oneof(fc.string({ maxLength: 16 }), fc.constantFrom("2026-13-45", "2026-02-30", "0000-00-00", "-1", "1e9", "asc", "desc", "101", "0", "20", "__proto__", "%00", "2026-12-01"));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/v1/usage", "/v1/admin/usage", "/v1/responses/resp_x/input_items", "/v1/models", "/v1/admin/keys"),
        fc.dictionary(fc.constantFrom("since", "key", "limit", "order", "after", "stream", "__proto__"), value, { maxKeys: 3 }),
        async (path, query) => {
          const qs = new URLSearchParams(Object.entries(query)).toString();
          const headers = path.startsWith("/v1/admin") ? admin : { authorization: `Bearer ${key.key}` };
          expectSafe(await send(`${path}?${qs}`, { method: "GET", headers }, vars), `GET ${path}?${qs}`);
        },
      ),
      params(),
    );
    await expectStillServes(vars, { authorization: `Bearer ${key.key}` });
  });
});

describe("fuzz: the relay socket", () => {
  it("any message a page can send: the hub stays up and a well-behaved session still serves", async () => {
    const model = `Fuzz-${crypto.randomUUID().slice(0, 8)}-q4f32_1-MLC`;
    const vars = { ...deployment(), ...configWith({ b: { targets: [{ kind: "browser", model }] } }, { timeouts: { commitMs: 300, heartbeatMs: 100 } }) };
    const message = fc.oneof(
      hostileJson.map((v) => JSON.stringify(v)),
      fc.string({ maxLength: 200 }),
      fc.record({ type: fc.constantFrom("hello", "chunk", "done", "error", "ping", "queue", "welcome", "request"), id: fc.oneof(fc.string({ maxLength: 8 }), pollutingKey), data: hostileJson, usage: hostileJson, models: hostileJson, version: hostileJson, message: fc.string({ maxLength: 5000 }), kind: fc.string({ maxLength: 20 }) }, { requiredKeys: ["type"] }).map((m) => JSON.stringify(m)),
      fc.integer({ min: 1_000_000, max: 1_100_000 }).map((n) => JSON.stringify({ type: "error", id: "x", message: "y".repeat(n) })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 5 }), async (messages) => {
        const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: `Bearer ${SECRETS.SERVE_TOKEN}` } }, vars);
        if (res.status !== 101) throw new Error(`the upgrade answered ${res.status}`);
        const session = new FakeSession(res.webSocket!, {});
        for (const m of messages) {
          if (session.closed) break;
          relayMessages++;
          session.send(m);
        }
        await new Promise((r) => setTimeout(r, 5));
        if (session.closed) expect4xxxClose(session.closed.code);
        else session.ws.close(1000);
      }),
      params(Math.max(30, Math.round(RUNS / 3))),
    );
    // A well-behaved page connects after all that and serves a request.
    const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: `Bearer ${SECRETS.SERVE_TOKEN}` } }, vars);
    const good = new FakeSession(res.webSocket!, {});
    await good.hello([model]);
    const answer = await send("/v1/chat/completions", { method: "POST", headers: json, body: JSON.stringify({ model: "b", messages: [{ role: "user", content: "hi" }], max_tokens: 8 }) }, vars);
    expectSafe(answer, "a request served by the good session");
    if (answer.status !== 200) throw new Error(`the good session did not serve: ${answer.status} ${answer.text.slice(0, 200)}`);
    good.ws.close(1000);
  });
});

function expect4xxxClose(code: number) {
  // 1000/1001 (closed by us), 1006 (gone), 1009 (too big) and the protocol's 4xxx codes are answers; 1011 is a crash.
  if (code === 1011) throw new Error("the hub closed the socket with 1011 (internal error)");
}
