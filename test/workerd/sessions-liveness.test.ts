import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { FakeSession } from "../fakes/fake-session.ts";
import { call } from "./harness.ts";

it("a page ping is answered by the runtime and stamps the session's liveness, which survives hibernation", async () => {
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: "Bearer t" } }, { SERVE_TOKEN: "t" });
  const s = new FakeSession(res.webSocket!);
  await s.hello(["Liveness-q4f32_1-MLC"]);
  const before = Date.now();
  s.send('{"type":"ping"}');
  await s.next((m) => m.type === "pong");
  const stamps = await runInDurableObject(env.SESSION_HUB.getByName("hub"), (_hub, state) =>
    state.getWebSockets().map((ws) => state.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? null),
  );
  expect(stamps.some((t) => t !== null && t >= before - 5)).toBe(true);
  await evictDurableObject(env.SESSION_HUB.getByName("hub"), { webSockets: "hibernate" });
  const after = await runInDurableObject(env.SESSION_HUB.getByName("hub"), (_hub, state) =>
    state.getWebSockets().map((ws) => state.getWebSocketAutoResponseTimestamp(ws)?.getTime() ?? null),
  );
  expect(after).toEqual(stamps);
  s.ws.close();
});
