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

async function open(headers: Record<string, string> = {}, extra: Record<string, unknown> = vars) {
  const res = await createApp().fetch(new Request("http://switchyard.test/v1/responses", { headers: { upgrade: "websocket", ...headers } }), { ...env, ...extra }, createExecutionContext());
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const inbox: any[] = [];
  const waiters: Array<() => void> = [];
  ws.addEventListener("message", (e) => {
    inbox.push(JSON.parse(e.data as string));
    waiters.splice(0).forEach((w) => w());
  });
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
  return { ws, next, send: (m: unknown) => ws.send(JSON.stringify(m)) };
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
    const { send, next, ws } = await open({ authorization: `Bearer ${key.key}` }, keyed);
    send({ type: "response.create", model: "m", input: "hi" });
    expect((await next("response.completed")).at(-1).type).toBe("response.completed");
    const revoked = await createApp().fetch(
      new Request(`http://switchyard.test/v1/admin/keys/${key.id}`, { method: "DELETE", headers: { authorization: `Bearer ${keyed.ADMIN_TOKEN}` } }),
      { ...env, ...keyed },
      createExecutionContext(),
    );
    expect(revoked.status).toBeLessThan(300);
    send({ type: "response.create", model: "m", input: "again" });
    expect((await next("response.completed")).at(-1)).toMatchObject({ type: "error", status: 401 });
    ws.close();
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
