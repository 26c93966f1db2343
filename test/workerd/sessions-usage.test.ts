import { describe, expect, it } from "vitest";
import { FakeSession, type Msg } from "../fakes/fake-session.ts";
import { call, configWith, createKey, keyedVars, readSse } from "./harness.ts";

// A serving page reports the usage its engine counted, and the asking key is charged for it. A count
// that is not a non-negative integer within what the request allows is replaced by Switchyard's own
// count, and the page is told with a `notice` (docs/relay-protocol.md).

const TOKEN = "serve-secret-for-usage-tests";
let n = 0;
const unique = () => `Fake-usage-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f32_1-MLC`;
const ANSWER = "Hello there, friend.";

/** A chat key, and a tab serving `model` that answers every request with ANSWER and then `usage`. */
async function setup(usage: unknown, where: "chunk" | "done" = "chunk") {
  const model = unique();
  const vars = keyedVars({ ...configWith({ m: { targets: [{ kind: "browser", model }] } }, { timeouts: { commitMs: 3000, heartbeatMs: 100 } }), SERVE_TOKEN: TOKEN });
  const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: `Bearer ${TOKEN}` } }, vars);
  expect(res.status).toBe(101);
  const tab = new FakeSession(res.webSocket!, { auto: false });
  await tab.hello([model]);
  tab.ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data)) as Msg;
    if (msg.type !== "request") return;
    const chunk = (choices: unknown[], extra: Msg = {}) => tab.send({ type: "chunk", id: msg.id, data: { object: "chat.completion.chunk", choices, ...extra } });
    for (const word of ANSWER.split(/(?= )/)) chunk([{ index: 0, delta: { content: word } }]);
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]);
    if (where === "chunk") chunk([], { usage });
    tab.send({ type: "done", id: msg.id, usage: where === "done" ? usage : null });
  });
  return { vars, alice, tab };
}

async function askAndCharge(vars: Record<string, unknown>, key: string, extra: Record<string, unknown> = {}) {
  const r = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "Say hello to a friend, please." }], stream: true, stream_options: { include_usage: true }, ...extra }, headers: { authorization: `Bearer ${key}` } }, vars);
  expect(r.res.status).toBe(200);
  const sse = await readSse(r.res);
  await r.done();
  const reported = sse.frames.find((f) => f.usage)?.usage;
  const own = await call("/v1/usage", { headers: { authorization: `Bearer ${key}` } }, vars);
  const charged = (await own.res.json<any>()).totals;
  return { reported, charged };
}

/** Switchyard's own count for the request the page got: about four characters a token. */
const ownCount = (req: Msg) => ({ prompt: Math.ceil(JSON.stringify(req.body.messages).length / 4), completion: Math.ceil(ANSWER.length / 4) });

describe("usage a serving page reports", () => {
  for (const [name, usage, replaced] of [
    ["prompt_tokens 1e15", { prompt_tokens: 1e15, completion_tokens: 5 }, "prompt"],
    ['prompt_tokens "abc"', { prompt_tokens: "abc", completion_tokens: 5 }, "prompt"],
    ["prompt_tokens -1", { prompt_tokens: -1, completion_tokens: 5 }, "prompt"],
    ["completion_tokens 1e15", { prompt_tokens: 12, completion_tokens: 1e15 }, "completion"],
  ] as const) {
    it(`${name}: the key is charged Switchyard's own count for it, and the page gets a notice`, async () => {
      const { vars, alice, tab } = await setup(usage);
      const { reported, charged } = await askAndCharge(vars, alice.key);
      const req = tab.inbox.find((m) => m.type === "request")!;
      const own = ownCount(req);
      const want = replaced === "prompt" ? { prompt_tokens: own.prompt, completion_tokens: 5 } : { prompt_tokens: 12, completion_tokens: own.completion };
      expect(reported).toMatchObject(want);
      expect(charged).toMatchObject({ requests: 1, errors: 0, ...want });
      const notice = await tab.next((m) => m.type === "notice");
      expect(notice).toMatchObject({ id: req.id, code: "usage_rejected" });
      expect(notice.message).toContain(`usage.${replaced}_tokens`);
      tab.ws.close();
    });
  }

  it("completion_tokens beyond the request's max_tokens is replaced, in done.usage too", async () => {
    const { vars, alice, tab } = await setup({ prompt_tokens: 12, completion_tokens: 17 }, "done");
    const { charged } = await askAndCharge(vars, alice.key, { max_tokens: 16 });
    expect(charged).toMatchObject({ prompt_tokens: 12, completion_tokens: Math.ceil(ANSWER.length / 4) });
    expect(await tab.next((m) => m.type === "notice")).toMatchObject({ code: "usage_rejected" });
    tab.ws.close();
  });

  it("usage within bounds is charged as reported, and no notice is sent", async () => {
    const { vars, alice, tab } = await setup({ prompt_tokens: 12, completion_tokens: 5 });
    const { reported, charged } = await askAndCharge(vars, alice.key, { max_tokens: 16 });
    expect(reported).toMatchObject({ prompt_tokens: 12, completion_tokens: 5 });
    expect(charged).toMatchObject({ prompt_tokens: 12, completion_tokens: 5 });
    expect(tab.inbox.filter((m) => m.type === "notice")).toEqual([]);
    tab.ws.close();
  });
});
