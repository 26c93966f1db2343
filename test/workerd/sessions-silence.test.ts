// A session that stops pinging is closed by the hub's own alarm at a documented moment (two ping
// intervals and 1 s after its last ping: 21 s), with 1001 "no ping for 21 s" — whether or not a
// request comes. One test waits the real 21 s in workerd; the others move a session's clock back by
// rewriting its attachment and run the alarm at once.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { SILENCE_LIMIT_MS, SILENT_CLOSE } from "../../src/upstreams/browser/session-liveness.ts";
import { FakeSession } from "../fakes/fake-session.ts";
import { call } from "./harness.ts";

const TOKEN = "serve-secret-for-silence-tests";
const hub = () => env.SESSION_HUB.getByName("hub");
let n = 0;
const uniqueModel = () => `Silence-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f32_1-MLC`;

async function serving() {
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: `Bearer ${TOKEN}` } }, { SERVE_TOKEN: TOKEN });
  const s = new FakeSession(res.webSocket!);
  const welcome = await s.hello([uniqueModel()]);
  return { s, sessionId: welcome.sessionId as string };
}

/** Makes the hub believe session `id` connected `agoMs` ago (and answered its last non-exact ping then, if any). */
async function age(sessionId: string, agoMs: number) {
  await runInDurableObject(hub(), (_hub, state) => {
    for (const ws of state.getWebSockets(sessionId)) {
      const att = ws.deserializeAttachment() as Record<string, unknown>;
      ws.serializeAttachment({ ...att, connectedAt: Date.now() - agoMs, ...(att.pingedAt ? { pingedAt: Date.now() - agoMs } : {}) });
    }
  });
}

it("the documented moment: 21 s, 1001 'no ping for 21 s'", () => {
  expect(SILENCE_LIMIT_MS).toBe(21_000);
  expect(SILENT_CLOSE).toEqual({ code: 1001, reason: "no ping for 21 s" });
});

it("a new session sets the alarm for its silence deadline; a silent one is closed by it, a pinging one kept", async () => {
  const silent = await serving();
  const pinging = await serving();
  const alarm = await runInDurableObject(hub(), (_hub, state) => state.storage.getAlarm());
  expect(alarm).not.toBeNull();
  expect(alarm!).toBeLessThanOrEqual(Date.now() + SILENCE_LIMIT_MS);
  expect(alarm!).toBeGreaterThan(Date.now() + SILENCE_LIMIT_MS - 5_000);

  await age(silent.sessionId, SILENCE_LIMIT_MS + 1);
  await age(pinging.sessionId, SILENCE_LIMIT_MS + 1);
  const before = Date.now();
  pinging.s.send('{"type":"ping"}');
  await pinging.s.next((m) => m.type === "pong");
  expect(await runDurableObjectAlarm(hub())).toBe(true);

  expect(await silent.s.waitClosed()).toEqual(SILENT_CLOSE);
  expect(pinging.s.closed).toBeNull();
  expect((await hub().sessions()).map((x) => x.sessionId)).toContain(pinging.sessionId);
  // Woken again for the pinging session's own deadline.
  const next = await runInDurableObject(hub(), (_hub, state) => state.storage.getAlarm());
  expect(next!).toBeGreaterThanOrEqual(before - 5 + SILENCE_LIMIT_MS);
  pinging.s.ws.close();
});

it("a ping the hub answers itself (not the exact text) counts as a sign of life too", async () => {
  const { s, sessionId } = await serving();
  await age(sessionId, SILENCE_LIMIT_MS + 1);
  s.send('{ "type": "ping" }');
  await s.next((m) => m.type === "pong");
  await runDurableObjectAlarm(hub());
  await new Promise((r) => setTimeout(r, 100));
  expect(s.closed).toBeNull();
  s.ws.close();
});

it("in real time: a silent session is closed about 21 s after its last sign of life with no request at all", { timeout: 40_000 }, async () => {
  const connected = Date.now();
  const silent = await serving();
  const pinging = await serving();
  const pings = setInterval(() => pinging.s.send('{"type":"ping"}'), 5_000);
  try {
    const closed = await silent.s.waitClosed(SILENCE_LIMIT_MS + 6_000);
    const after = Date.now() - connected;
    expect(closed).toEqual(SILENT_CLOSE);
    expect(after).toBeGreaterThanOrEqual(SILENCE_LIMIT_MS - 100);
    expect(after).toBeLessThan(SILENCE_LIMIT_MS + 5_000);
    expect(pinging.s.closed).toBeNull();
  } finally {
    clearInterval(pings);
    pinging.s.ws.close();
  }
});
