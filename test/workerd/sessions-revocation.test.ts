import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FakeSession } from "../fakes/fake-session.ts";
import { GRANT_HEADER } from "../../src/upstreams/browser/serve-grant.ts";
import { call, configWith, createKey, keyedVars } from "./harness.ts";

// Revoking a serve key, or changing its `serves`, applies at once: to its live sessions, to the
// tickets it got before the change, and to a grant read just before it (another isolate's cached key).

/** The one SessionHub every test shares. */
const hub = () => env.SESSION_HUB.getByName("hub");
let n = 0;
const unique = () => `Fake-revoke-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f32_1-MLC`;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const timeouts = { timeouts: { commitMs: 3000, heartbeatMs: 100 } };

async function ticketFor(vars: Record<string, unknown>, credential: string): Promise<string> {
  const t = await call("/v1/sessions/ticket", { method: "POST", headers: bearer(credential) }, vars);
  expect(t.res.status).toBe(200);
  return (await t.res.json<{ ticket: string }>()).ticket;
}

const connectWith = (vars: Record<string, unknown>, ticket: string) => call(`/v1/sessions?ticket=${ticket}`, { headers: { upgrade: "websocket" } }, vars);

async function team(model: string) {
  const vars = keyedVars(configWith({ m: { targets: [{ kind: "browser", model }] } }, timeouts));
  const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
  const bob = await createKey(vars, { name: "bob", scopes: ["chat"] });
  const laptop = await createKey(vars, { name: "laptop", scopes: ["serve"], serves: [alice.id] });
  const admin = { authorization: `Bearer ${vars.ADMIN_TOKEN}` };
  return { vars, alice, bob, laptop, admin };
}

describe("revoking a serve key", () => {
  it("a ticket it got before the revocation opens nothing: 403 invalid_serve_key, no session", async () => {
    const model = unique();
    const { vars, laptop, admin } = await team(model);
    const ticket = await ticketFor(vars, laptop.key);
    const revoked = await call(`/v1/admin/keys/${laptop.id}`, { method: "DELETE", headers: admin }, vars);
    expect(revoked.res.status).toBe(200);
    const { res } = await connectWith(vars, ticket);
    expect(res.status).toBe(403);
    expect((await res.json<any>()).error.code).toBe("invalid_serve_key");
    expect((await hub().sessions()).filter((s) => s.serveKey === laptop.id)).toEqual([]);
  });

  it("a grant read just before the revocation (a cached key elsewhere) is refused by the hub at connect", async () => {
    const model = unique();
    const { vars, laptop, admin } = await team(model);
    await call(`/v1/admin/keys/${laptop.id}`, { method: "DELETE", headers: admin }, vars);
    const stale = JSON.stringify({ keyId: laptop.id, serves: null });
    const res = await hub().fetch("https://hub/connect?verified=1", { headers: { upgrade: "websocket", [GRANT_HEADER]: stale } });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe("invalid_serve_key");
  });

  it("its live session is closed with 4403", async () => {
    const model = unique();
    const { vars, laptop, admin } = await team(model);
    const { res } = await connectWith(vars, await ticketFor(vars, laptop.key));
    expect(res.status).toBe(101);
    const tab = new FakeSession(res.webSocket!);
    await tab.hello([model]);
    await call(`/v1/admin/keys/${laptop.id}`, { method: "DELETE", headers: admin }, vars);
    expect(await tab.waitClosed()).toMatchObject({ code: 4403 });
  });
});

describe("narrowing a serve key's serves", () => {
  it("a ticket it got before the change opens a session with the new serves", async () => {
    const model = unique();
    const { vars, alice, bob, laptop, admin } = await team(model);
    const ticket = await ticketFor(vars, laptop.key);
    const patched = await call(`/v1/admin/keys/${laptop.id}`, { method: "PATCH", json: { serves: [bob.id] }, headers: admin }, vars);
    expect(patched.res.status).toBe(200);
    const { res } = await connectWith(vars, ticket);
    expect(res.status).toBe(101);
    const tab = new FakeSession(res.webSocket!);
    const welcome = await tab.hello([model]);
    const listed = (await hub().sessions()).find((s) => s.sessionId === welcome.sessionId);
    expect(listed).toMatchObject({ serveKey: laptop.id, serves: [bob.id] });
    const ask = (key: string) => call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "echo: hi" }] }, headers: bearer(key) }, vars);
    expect((await ask(alice.key)).res.status).toBe(503);
    expect((await ask(bob.key)).res.status).toBe(200);
    tab.ws.close();
  });

  it("a grant read just before the change connects with the new serves", async () => {
    const model = unique();
    const { vars, alice, bob, laptop, admin } = await team(model);
    await call(`/v1/admin/keys/${laptop.id}`, { method: "PATCH", json: { serves: [bob.id] }, headers: admin }, vars);
    const stale = JSON.stringify({ keyId: laptop.id, serves: [alice.id] });
    const res = await hub().fetch("https://hub/connect?verified=1", { headers: { upgrade: "websocket", [GRANT_HEADER]: stale } });
    expect(res.status).toBe(101);
    const tab = new FakeSession(res.webSocket!);
    const welcome = await tab.hello([model]);
    const listed = (await hub().sessions()).find((s) => s.sessionId === welcome.sessionId);
    expect(listed).toMatchObject({ serveKey: laptop.id, serves: [bob.id] });
    tab.ws.close();
  });
});
