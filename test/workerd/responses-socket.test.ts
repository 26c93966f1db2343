import { describe, expect, it } from "vitest";
import { createExecutionContext, env } from "cloudflare:test";
import { createApp } from "../../src/app.ts";
import { configWith, createKey, FIXTURE_URL, keyedVars, received } from "./harness.ts";

// The Responses API over a WebSocket, as Codex opens it first on its built-in provider: a prewarm
// (`generate: false`), then each turn a response.create chained by previous_response_id with only its
// new input items and store: false; the SSE path's events come back as text messages.

const SAY = "Socket answer.";
const models = { m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/${encodeURIComponent(SAY)}` }] }, e: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/endless` }] } };
const vars = configWith(models);

const upgrade = (headers: Record<string, string>, extra: Record<string, unknown>) =>
  createApp().fetch(new Request("http://switchyard.test/v1/responses", { headers: { upgrade: "websocket", ...headers } }), { ...env, ...extra }, createExecutionContext());

async function open(headers: Record<string, string> = {}, extra: Record<string, unknown> = vars) {
  const res = await upgrade(headers, extra);
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const inbox: any[] = [];
  const waiters: Array<() => void> = [];
  let receivedBytes = 0;
  ws.addEventListener("message", (e) => {
    receivedBytes += new TextEncoder().encode(e.data as string).length;
    inbox.push(JSON.parse(e.data as string));
    waiters.splice(0).forEach((w) => w());
  });
  /** The close Switchyard sent: its code and reason. */
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })));
  /** Messages until one of type `until` (inclusive), or the first `error`. */
  const next = async (until: string, withinMs = 10_000): Promise<any[]> => {
    const deadline = Date.now() + withinMs;
    const got: any[] = [];
    for (;;) {
      while (inbox.length > 0) {
        const m = inbox.shift();
        got.push(m);
        if (m.type === until || m.type === "error") return got;
      }
      if (Date.now() > deadline) throw new Error(`no ${until} within ${withinMs} ms; got ${JSON.stringify(got.map((m) => m.type))}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 100);
      });
    }
  };
  return { ws, next, closed, received: () => receivedBytes, send: (m: unknown) => ws.send(JSON.stringify(m)) };
}

const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });
const sentTo = async (marker: string) => (await received()).filter((r) => r.body.includes(marker)).map((r) => JSON.parse(r.body));

describe("GET /v1/responses", () => {
  it("without an upgrade is 426 upgrade_required, so clients fall back to HTTP at once", async () => {
    const res = await createApp().fetch(new Request("http://switchyard.test/v1/responses"), { ...env, ...vars }, createExecutionContext());
    expect(res.status).toBe(426);
    expect((await res.json<any>()).error.code).toBe("upgrade_required");
  });

  it("prewarm, then turns chained by previous_response_id with store: false: the model sees the whole conversation", async () => {
    const marker = `m-${crypto.randomUUID()}`;
    const { send, next, ws } = await open();
    send({ type: "response.create", generate: false, model: "m", instructions: "Be brief.", store: false, input: [user(`first ${marker}`)], tools: [] });
    const warm = await next("response.completed");
    expect(warm.map((m) => m.type)).toEqual(["response.created", "response.completed"]);
    expect(await sentTo(marker)).toEqual([]); // nothing generated

    send({ type: "response.create", model: "m", instructions: "Be brief.", store: false, previous_response_id: warm[1].response.id, input: [] });
    const turn1 = await next("response.completed");
    expect(turn1[0].type).toBe("response.created");
    expect(turn1.filter((m) => m.type === "response.output_text.delta").map((m) => m.delta).join("")).toBe(SAY);
    const done1 = turn1.at(-1).response;
    expect(done1.status).toBe("completed");
    expect((await sentTo(marker)).at(-1).messages.map((m: any) => m.content)).toEqual(["Be brief.", `first ${marker}`]);

    send({ type: "response.create", model: "m", instructions: "Be brief.", store: false, previous_response_id: done1.id, input: [user("second")] });
    const turn2 = await next("response.completed");
    expect(turn2.at(-1).type).toBe("response.completed");
    expect((await sentTo(marker)).at(-1).messages.map((m: any) => m.content)).toEqual(["Be brief.", `first ${marker}`, SAY, "second"]);
    ws.close();
  });

  it("one response at a time: a second response.create while one runs is an error event; bad messages are error events", async () => {
    const { send, next, ws } = await open();
    send({ type: "response.create", model: "m", input: "one" });
    send({ type: "response.create", model: "m", input: "two" });
    const refused = await next("error");
    expect(refused.at(-1)).toMatchObject({ type: "error", status: 400, error: { code: "response_in_progress" } });
    expect((await next("response.completed")).at(-1).type).toBe("response.completed"); // the first one runs on
    send({ type: "session.update" });
    expect((await next("error")).at(-1)).toMatchObject({ status: 400, error: { code: "invalid_message", param: "type" } });
    ws.send("not json");
    expect((await next("error")).at(-1)).toMatchObject({ status: 400, error: { code: "invalid_message" } });
    send({ type: "response.create", model: "m", input: "x", previous_response_id: "resp_unknown", store: false });
    expect((await next("error")).at(-1)).toMatchObject({ type: "error", status: 400, error: { code: "previous_response_not_found" } });
    ws.close();
  });

  it("authenticates the upgrade like HTTP, and every response again: a key revoked mid-session fails its next response", async () => {
    const keyed = keyedVars(vars);
    const key = await createKey(keyed, { name: "codex", scopes: ["chat"] });
    await createKey(keyed, { name: "other", scopes: ["chat"] }); // under npm start, revoking the last key would open the door
    const denied = await createApp().fetch(new Request("http://switchyard.test/v1/responses", { headers: { upgrade: "websocket" } }), { ...env, ...keyed }, createExecutionContext());
    expect(denied.status).toBe(401);
    const { send, next, closed } = await open({ authorization: `Bearer ${key.key}` }, keyed);
    send({ type: "response.create", model: "m", input: "hi" });
    expect((await next("response.completed")).at(-1).type).toBe("response.completed");
    const revoked = await createApp().fetch(
      new Request(`http://switchyard.test/v1/admin/keys/${key.id}`, { method: "DELETE", headers: { authorization: `Bearer ${keyed.ADMIN_TOKEN}` } }),
      { ...env, ...keyed },
      createExecutionContext(),
    );
    expect(revoked.status).toBeLessThan(300);
    send({ type: "response.create", model: "m", input: "again" });
    expect((await next("response.completed")).at(-1)).toMatchObject({ type: "error", status: 401, error: { code: "invalid_api_key" } });
    expect(await closed).toMatchObject({ code: 4401 });
  });

  it("closing the socket mid-answer cancels the upstream request", async () => {
    const marker = `m-${crypto.randomUUID()}`;
    const { send, next, ws } = await open();
    send({ type: "response.create", model: "e", input: marker });
    await next("response.output_text.delta");
    const requestId = (await received()).find((r) => r.body.includes(marker))!.headers["x-request-id"];
    ws.close();
    const deadline = Date.now() + 5000;
    let closed = false;
    while (!closed && Date.now() < deadline) {
      closed = ((await (await fetch(`${FIXTURE_URL}/_closed`)).json()) as Array<{ requestId: string }>).some((c) => c.requestId === requestId);
      if (!closed) await new Promise((r) => setTimeout(r, 50));
    }
    expect(closed).toBe(true);
  });
});

// Issue 40 ("one key cannot hurt the team"): what one socket, and one key's sockets, may make Switchyard hold.
describe("GET /v1/responses: one key's sockets are bounded", () => {
  const KB = 1024;
  const bounded = (limits: Record<string, number>, more: Record<string, unknown> = {}) =>
    configWith({ ...models, f: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/flood/4096` }] } }, { limits: { maxBodyBytes: 64 * KB, ...limits }, ...more });
  const revoke = (keyed: Record<string, unknown> & { ADMIN_TOKEN: string }, id: string) =>
    createApp().fetch(new Request(`http://switchyard.test/v1/admin/keys/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${keyed.ADMIN_TOKEN}` } }), { ...env, ...keyed }, createExecutionContext());

  it("a chained conversation is held to limits.maxBodyBytes in UTF-8 bytes: past it 413 request_too_large, and the chain is not grown", async () => {
    const { send, next, ws } = await open({}, bounded({}));
    let last: string | undefined;
    // Each prepared message is 20 KiB; chained, the third makes 60 KiB and the fourth would make 80.
    for (let i = 0; i < 3; i++) {
      send({ type: "response.create", generate: false, model: "m", store: false, ...(last ? { previous_response_id: last } : {}), input: [user("x".repeat(20 * KB))] });
      const done = (await next("response.completed")).at(-1);
      expect(done.type).toBe("response.completed");
      last = done.response.id;
    }
    send({ type: "response.create", generate: false, model: "m", store: false, previous_response_id: last, input: [user("x".repeat(20 * KB))] });
    expect((await next("response.completed")).at(-1)).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
    // The chain is what it was: a small turn on it still fits.
    send({ type: "response.create", generate: false, model: "m", store: false, previous_response_id: last, input: [user("small")] });
    expect((await next("response.completed")).at(-1).type).toBe("response.completed");
    // A message is measured in bytes: 40 K characters of "é" are 80 KiB.
    send({ type: "response.create", generate: false, model: "m", input: "é".repeat(40 * KB) });
    expect((await next("response.completed")).at(-1)).toMatchObject({ type: "error", status: 413, error: { code: "request_too_large" } });
    ws.close();
  });

  it("an answer faster than the client is assumed to read pauses the upstream, then closes the socket (4408) and cancels the upstream", async () => {
    const marker = `m-${crypto.randomUUID()}`;
    // 64 KiB may wait unread; the client is assumed to read 256 KiB/s: held back past 1/4 s, the socket closes.
    const { send, closed, received: got } = await open({}, bounded({ socketReadBytesPerS: 256 * KB }));
    send({ type: "response.create", model: "f", input: marker });
    expect(await closed).toMatchObject({ code: 4408 });
    // What was sent: the bucket, what drained while it was held back, and the frames in flight, and
    // what drains while the 1/4 s timer fires late on a loaded machine (1/8 s more: 32 KiB; once
    // 9 KiB over without it, two vitest processes beside end-to-end lanes). Unbounded, it is MiBs.
    expect(got()).toBeLessThan(2 * 64 * KB + 64 * KB + 32 * KB);
    const requestId = (await received()).find((r) => r.body.includes(marker))!.headers["x-request-id"];
    const deadline = Date.now() + 5000;
    let cancelled = false;
    while (!cancelled && Date.now() < deadline) {
      cancelled = ((await (await fetch(`${FIXTURE_URL}/_closed`)).json()) as Array<{ requestId: string }>).some((c) => c.requestId === requestId);
      if (!cancelled) await new Promise((r) => setTimeout(r, 50));
    }
    expect(cancelled).toBe(true);
  });

  it("a key holds limits.maxSocketsPerKey sockets at once (429 too_many_sockets past it); a closed socket gives its place back", async () => {
    const keyed = keyedVars(bounded({ maxSocketsPerKey: 2 }));
    const key = await createKey(keyed, { name: "codex", scopes: ["chat"] });
    const auth = { authorization: `Bearer ${key.key}` };
    const first = await open(auth, keyed);
    await open(auth, keyed);
    const refused = await upgrade(auth, keyed);
    expect(refused.status).toBe(429);
    expect((await refused.json<any>()).error).toMatchObject({ code: "too_many_sockets", type: "rate_limit_error" });
    first.ws.close(1000);
    const deadline = Date.now() + 5000;
    let again = await upgrade(auth, keyed);
    while (again.status === 429 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      again = await upgrade(auth, keyed);
    }
    expect(again.status).toBe(101);
  });

  it("every message is checked against the key as it is now, generate: false included: a revoked key's socket gets 401 and is closed (4401)", async () => {
    const keyed = keyedVars(bounded({}));
    const key = await createKey(keyed, { name: "codex", scopes: ["chat"] });
    await createKey(keyed, { name: "other", scopes: ["chat"] });
    const { send, next, closed } = await open({ authorization: `Bearer ${key.key}` }, keyed);
    send({ type: "response.create", generate: false, model: "m", input: "warm" });
    expect((await next("response.completed")).at(-1).type).toBe("response.completed");
    expect((await revoke(keyed, key.id)).status).toBeLessThan(300);
    send({ type: "response.create", generate: false, model: "m", input: "x".repeat(32 * KB) });
    expect((await next("response.completed")).at(-1)).toMatchObject({ type: "error", status: 401, error: { code: "invalid_api_key" } });
    expect(await closed).toMatchObject({ code: 4401 });
  });

  it("a socket takes limits.maxMessagesPerSocket messages, then says so (429) and closes (4429)", async () => {
    const { send, next, closed } = await open({}, bounded({ maxMessagesPerSocket: 3 }));
    for (let i = 0; i < 3; i++) {
      send({ type: "response.create", generate: false, model: "m", input: `turn ${i}` });
      expect((await next("response.completed")).at(-1).type).toBe("response.completed");
    }
    send({ type: "response.create", generate: false, model: "m", input: "one too many" });
    expect((await next("response.completed")).at(-1)).toMatchObject({ type: "error", status: 429, error: { code: "too_many_socket_messages" } });
    expect(await closed).toMatchObject({ code: 4429 });
  });
});
