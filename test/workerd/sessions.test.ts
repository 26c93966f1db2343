import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FakeSession } from "../fakes/fake-session.ts";
import { FIXTURE_URL, call, configWith, parseSse, readSse, text } from "./harness.ts";

const TOKEN = "serve-secret-for-tests";
let n = 0;
/** A model id of its own per test: every test shares the one hub. */
const uniqueModel = () => `Fake-${++n}-${Math.random().toString(36).slice(2, 6)}-q4f32_1-MLC`;

function vars(models: Record<string, unknown>) {
  return { ...configWith(models, { timeouts: { commitMs: 300, heartbeatMs: 100 } }), SERVE_TOKEN: TOKEN };
}
const browserOnly = (model: string) => vars({ m: { targets: [{ kind: "browser", model }] } });

async function connect(opts: ConstructorParameters<typeof FakeSession>[1] = {}, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) {
  const { res } = await call("/v1/sessions", { headers: { upgrade: "websocket", ...headers } }, { SERVE_TOKEN: TOKEN });
  expect(res.status).toBe(101);
  return new FakeSession(res.webSocket!, opts);
}

async function serving(model: string, opts: ConstructorParameters<typeof FakeSession>[1] = {}) {
  const s = await connect(opts);
  await s.hello([model]);
  return s;
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ model: "m", messages: [{ role: "user", content }], stream: true, ...extra });

/** A stream the session for `model` begins ("Partial") and then drops (the tab closes): what the client read. */
async function dropsAfterPartial(model: string, config: Record<string, unknown>) {
  const s = await serving(model, { auto: false });
  const pending = call("/v1/chat/completions", { json: ask("hi") }, config);
  const req = await s.next((m) => m.type === "request");
  s.send({ type: "chunk", id: req.id, data: { id: "u", model, object: "chat.completion.chunk", created: 1, choices: [{ delta: { content: "Partial", role: "assistant" }, finish_reason: null, index: 0, logprobs: null }] } });
  const { res } = await pending;
  const reading = readSse(res);
  await new Promise((r) => setTimeout(r, 50));
  s.ws.close(1001, "tab closed");
  return reading;
}

describe("credentials before the upgrade", () => {
  it("401 without a credential, 403 with a wrong one or when no SERVE_TOKEN is set, 426 without an upgrade", async () => {
    const none = await call("/v1/sessions", { headers: { upgrade: "websocket" } }, { SERVE_TOKEN: TOKEN });
    expect(none.res.status).toBe(401);
    expect((await none.res.json<any>()).error.code).toBe("missing_credential");
    const wrong = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: "Bearer nope" } }, { SERVE_TOKEN: TOKEN });
    expect(wrong.res.status).toBe(403);
    const unset = await call("/v1/sessions", { headers: { upgrade: "websocket", authorization: "Bearer anything" } }, { SERVE_TOKEN: "" });
    expect(unset.res.status).toBe(403);
    expect((await unset.res.json<any>()).error.message).toContain("SERVE_TOKEN");
    const plain = await call("/v1/sessions", { headers: { authorization: `Bearer ${TOKEN}` } }, { SERVE_TOKEN: TOKEN });
    expect(plain.res.status).toBe(426);
  });

  it("GET /v1/sessions/models: the deployment's browser models, a GGUF's URL or a self-hosted web-llm record with it, for a serve credential only", async () => {
    const mlc = { url: "https://models.example.com/own-mlc", lib: "https://models.example.com/libs/own-webgpu.wasm" };
    const cfg = vars({
      m: { targets: [{ kind: "browser", model: "tiny", gguf: "https://models.example.com/tiny.gguf" }, { kind: "browser", model: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC" }] },
      own: { targets: [{ kind: "browser", model: "Own-q4f32_1-MLC", mlc }] },
    });
    const { res } = await call("/v1/sessions/models", { headers: { authorization: `Bearer ${TOKEN}` } }, cfg);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      object: "list",
      data: [{ model: "tiny", gguf: "https://models.example.com/tiny.gguf" }, { model: "Qwen2.5-0.5B-Instruct-q4f32_1-MLC" }, { model: "Own-q4f32_1-MLC", mlc }],
    });
    expect((await call("/v1/sessions/models", {}, cfg)).res.status).toBe(401);
    expect((await call("/v1/sessions/models", { headers: { authorization: "Bearer nope" } }, cfg)).res.status).toBe(403);
  });

  it("a ticket is one-use: POST /v1/sessions/ticket with the token, then ?ticket=", async () => {
    expect((await call("/v1/sessions/ticket", { method: "POST" }, { SERVE_TOKEN: TOKEN })).res.status).toBe(401);
    const { res } = await call("/v1/sessions/ticket", { method: "POST", headers: { authorization: `Bearer ${TOKEN}` } }, { SERVE_TOKEN: TOKEN });
    expect(res.status).toBe(200);
    const { ticket, expires_in } = await res.json<any>();
    expect(ticket).toMatch(/^tk_[0-9a-f]{48}$/);
    expect(expires_in).toBe(60);
    const first = await call(`/v1/sessions?ticket=${ticket}`, { headers: { upgrade: "websocket" } }, { SERVE_TOKEN: TOKEN });
    expect(first.res.status).toBe(101);
    first.res.webSocket!.accept();
    first.res.webSocket!.close();
    const again = await call(`/v1/sessions?ticket=${ticket}`, { headers: { upgrade: "websocket" } }, { SERVE_TOKEN: TOKEN });
    expect(again.res.status).toBe(403);
    expect((await again.res.json<any>()).error.code).toBe("invalid_ticket");
    const bogus = await call(`/v1/sessions?ticket=tk_bogus`, { headers: { upgrade: "websocket" } }, { SERVE_TOKEN: TOKEN });
    expect(bogus.res.status).toBe(403);
  });
});

describe("register and relay", () => {
  it("hello → welcome; a stream is answered by the session as clean OpenAI frames, target named", async () => {
    const model = uniqueModel();
    const s = await connect();
    const welcome = await s.hello([model]);
    expect(welcome).toMatchObject({ type: "welcome", version: 1, maxMessageBytes: 1048576, pingIntervalMs: 10000 });
    // 128 random bits (32 hex digits): a session id must not be guessable.
    expect(welcome.sessionId).toMatch(/^s_[0-9a-f]{32}$/);

    const { res } = await call("/v1/chat/completions", { json: ask("echo: Hello from a browser tab.", { stream_options: { include_usage: true } }) }, browserOnly(model));
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-target")).toBe(`browser:${model}`);
    const sse = await readSse(res);
    expect(text(sse.frames)).toBe("Hello from a browser tab.");
    expect(sse.done).toBe(true);
    for (const f of sse.frames) {
      expect(f.object).toBe("chat.completion.chunk");
      expect(f.id).toMatch(/^chatcmpl-/);
      expect(f.model).toBe("m");
    }
    const roles = sse.frames.filter((f) => f.choices?.[0]?.delta?.role);
    expect(roles.length).toBe(1);
    const finish = sse.frames.find((f) => f.choices?.[0]?.finish_reason);
    expect(finish!.choices[0].finish_reason).toBe("stop");
    expect(finish!.x_switchyard.target).toBe(`browser:${model}`);
    const usage = sse.frames.at(-1)!.usage;
    expect(usage.completion_tokens).toBe(5);
    // What the page got: adapted for web-llm.
    const req = s.inbox.find((m) => m.type === "request")!;
    expect(req.body).toMatchObject({ model, stream: true, stream_options: { include_usage: true } });
    s.ws.close();
  });

  it("non-stream: one chat.completion body with usage and timings from usage.extra", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const { res } = await call("/v1/chat/completions", { json: ask("echo: Plain body.", { stream: false }) }, browserOnly(model));
    const body = await res.json<any>();
    expect(body.choices[0].message).toMatchObject({ role: "assistant", content: "Plain body." });
    expect(body.choices[0].finish_reason).toBe("stop");
    expect(body.usage.completion_tokens).toBe(2);
    expect(body.x_switchyard.target).toBe(`browser:${model}`);
    s.ws.close();
  });

  it("adapts the request: system first, developer → system, null and array content, max_completion_tokens, json_schema", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const messages = [
      { role: "user", content: [{ type: "text", text: "first" }, { type: "text", text: "part" }] },
      { role: "assistant", content: null },
      { role: "developer", content: "Be brief." },
      { role: "system", content: "Be kind." },
      { role: "user", content: "echo: ok" },
    ];
    const { res } = await call(
      "/v1/chat/completions",
      { json: { model: "m", messages, max_completion_tokens: 7, response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } } } },
      browserOnly(model),
    );
    expect((await res.json<any>()).choices[0].message.content).toBe("ok");
    const body = s.inbox.find((m) => m.type === "request")!.body;
    expect(body.messages).toEqual([
      { role: "system", content: "Be brief.\n\nBe kind." },
      { role: "user", content: "first\npart" },
      { role: "assistant", content: "" },
      { role: "user", content: "echo: ok" },
    ]);
    expect(body.max_tokens).toBe(7);
    expect(body.max_completion_tokens).toBeUndefined();
    expect(body.response_format).toEqual({ type: "json_object", schema: '{"type":"object"}' });
    s.ws.close();
  });

  it("fails over from a dead llama.cpp upstream to the session", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const { res } = await call(
      "/v1/chat/completions",
      { json: ask("echo: Served after failover.") },
      vars({ m: { targets: [{ kind: "llama", url: "http://127.0.0.1:9" }, { kind: "browser", model }] } }),
    );
    // The headers name the target only when it answered within the commit grace (300 ms here; a
    // loaded machine can miss it): the finish chunk's x_switchyard always does.
    const header = res.headers.get("x-switchyard-target");
    if (header) expect(header).toBe(`browser:${model}`);
    const { frames } = await readSse(res);
    expect(text(frames)).toBe("Served after failover.");
    expect(frames.find((f) => f.x_switchyard)?.x_switchyard).toMatchObject({ target: `browser:${model}`, attempts: 2 });
    s.ws.close();
  });

  it.each([
    ["loading (503 model_loading)", "fixture/loading-503"],
    ["timing out (no response headers)", "behave/stall-headers/5000"],
  ])("fails over from a llama.cpp upstream that is %s", async (_why, path) => {
    const model = uniqueModel();
    const s = await serving(model);
    const { res } = await call(
      "/v1/chat/completions",
      { json: ask("echo: The tab took over.") },
      { ...configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/${path}` }, { kind: "browser", model }] } }, { timeouts: { responseStartMs: 300, commitMs: 1000 } }), SERVE_TOKEN: TOKEN },
    );
    expect(res.headers.get("x-switchyard-target")).toBe(`browser:${model}`);
    expect(text((await readSse(res)).frames)).toBe("The tab took over.");
    s.ws.close();
  });

  it("503 no_capacity with Retry-After when no session serves the model", async () => {
    const none = await call("/v1/chat/completions", { json: ask("hi") }, browserOnly(uniqueModel()));
    expect(none.res.status).toBe(503);
    expect(none.res.headers.get("retry-after")).toBe("5");
    expect((await none.res.json<any>()).error.code).toBe("no_capacity");
  });

  it("tools: the session gets prompt mode (no tools, a described system prompt, a json_object schema) and its text becomes tool_calls", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
    const reply = '{"tool_call": {"name": "get_weather", "arguments": {"city": "Paris"}}}';
    for (const stream of [true, false]) {
      const { res } = await call("/v1/chat/completions", { json: ask(`echo: ${reply}`, { tools, stream }) }, browserOnly(model));
      expect(res.status).toBe(200);
      const calls = stream
        ? (await readSse(res)).frames.flatMap((f) => f.choices?.[0]?.delta?.tool_calls ?? [])
        : ((await res.json<any>()).choices[0].message.tool_calls as any[]);
      expect(calls[0].function.name).toBe("get_weather");
      expect(JSON.parse(calls.map((c: any) => c.function.arguments).join(""))).toEqual({ city: "Paris" });
    }
    const sent = s.inbox.find((m) => m.type === "request")!.body;
    expect(sent.tools).toBeUndefined();
    expect(sent.messages[0].role).toBe("system");
    expect(sent.messages[0].content).toContain("get_weather");
    expect(sent.response_format.type).toBe("json_object");
    expect(JSON.parse(sent.response_format.schema)).toBeTypeOf("object");
    s.ws.close();
  });

  it("web-llm errors map to outcomes: context overflow → 400 context_length_exceeded, request error → 400", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const long = Array.from({ length: 5000 }, () => "word").join(" ");
    const overflow = await call("/v1/chat/completions", { json: ask(long) }, browserOnly(model));
    expect(overflow.res.status).toBe(400);
    expect((await overflow.res.json<any>()).error.code).toBe("context_length_exceeded");
    const prefill = await call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "a" }, { role: "assistant", content: "b" }] } }, browserOnly(model));
    expect(prefill.res.status).toBe(400);
    expect((await prefill.res.json<any>()).error.message).toContain("MessageOrderError");
    s.ws.close();
  });
});

describe("queueing and choice of session", () => {
  it("one running request per session and model; the rest wait in the hub, all answered in order", async () => {
    const model = uniqueModel();
    const s = await serving(model, { tokenDelayMs: 10 });
    const replies = await Promise.all(
      [1, 2, 3, 4].map(async (i) => {
        const { res } = await call("/v1/chat/completions", { json: ask(`echo: answer number ${i}`) }, browserOnly(model));
        return text((await readSse(res)).frames);
      }),
    );
    expect(replies).toEqual([1, 2, 3, 4].map((i) => `answer number ${i}`));
    expect(s.maxRunning).toBe(1);
    expect(s.served).toBe(4);
    expect(s.inbox.some((m) => m.type === "queue" && m.waiting > 0)).toBe(true);
    s.ws.close();
  });

  it("picks the least-busy session that has the model; 503 when every queue is full (admission queue off)", async () => {
    const model = uniqueModel();
    const a = await serving(model, { auto: false });
    const b = await serving(model, { auto: false });
    // queue.maxWaitMs 0: the hub's own refusal, not a wait in Switchyard's admission queue.
    const config = { ...configWith({ m: { targets: [{ kind: "browser", model }] } }, { timeouts: { commitMs: 300, heartbeatMs: 100 }, queue: { maxWaitMs: 0 } }), SERVE_TOKEN: TOKEN };
    const started = [1, 2].map(() => call("/v1/chat/completions", { json: ask("hi") }, config));
    await a.next((m) => m.type === "request");
    await b.next((m) => m.type === "request");
    // 2 running + 2 × 4 waiting fill both sessions; the next request is refused at once.
    const waiting = Array.from({ length: 8 }, () => call("/v1/chat/completions", { json: ask("hi") }, config));
    await Promise.all([a.next((m) => m.type === "queue" && m.waiting === 4), b.next((m) => m.type === "queue" && m.waiting === 4)]);
    const full = await call("/v1/chat/completions", { json: ask("hi") }, config);
    expect(full.res.status).toBe(503);
    expect(full.res.headers.get("retry-after")).toBe("2");
    expect((await full.res.json<any>()).error.message).toContain("busy");
    a.ws.close();
    b.ws.close();
    await Promise.allSettled([...started, ...waiting].map(async (p) => (await p).res.text()));
  });
});

describe("a conversation's KV stays with its session", () => {
  it("with every queue full, the next request waits in Switchyard's admission queue (keep-alives only) and is served once the session has room", async () => {
    const model = uniqueModel();
    const a = await serving(model, { auto: false });
    // A model name of its own: the admission queue has one line per model name.
    const config = { ...configWith({ [model]: { targets: [{ kind: "browser", model }] } }, { timeouts: { commitMs: 300, heartbeatMs: 100 } }), SERVE_TOKEN: TOKEN };
    const askIt = (content: string) => call("/v1/chat/completions", { json: { ...ask(content), model } }, config);
    // 1 running + 4 waiting fill the session.
    const first = [1, 2, 3, 4, 5].map((i) => askIt(`echo: answer ${i}`));
    await a.next((m) => m.type === "queue" && m.waiting === 4);
    const late = askIt("echo: waited in line");
    await new Promise((r) => setTimeout(r, 800));
    expect(a.inbox.filter((m) => m.type === "request")).toHaveLength(1);
    // The page answers one at a time; the late request reaches it only once the hub has room.
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const req = await a.next((m) => m.type === "request" && !seen.has(m.id));
      seen.add(req.id);
      await a.answer(req);
    }
    const { res } = await late;
    expect(res.status).toBe(200);
    const raw = await res.text();
    expect(raw.slice(0, raw.indexOf("data:"))).toMatch(/^(: keep-alive\n\n)+$/);
    expect(text(parseSse(raw).frames)).toBe("waited in line");
    expect(await Promise.all(first.map(async (p) => text((await readSse((await p).res)).frames)))).toEqual([1, 2, 3, 4, 5].map((i) => `answer ${i}`));
    a.ws.close();
  });

  it("the next turn goes to the session whose engine ran the conversation last, not to the first idle one", async () => {
    const model = uniqueModel();
    const a = await serving(model, { tokenDelayMs: 30 });
    const b = await serving(model, { tokenDelayMs: 30 });
    const conv = (name: string) => [{ role: "user", content: `echo: conversation ${name} begins here` }];
    const holderOf = (name: string) => [a, b].find((s) => s.engine.requests.some((r: any) => JSON.stringify(r.messages).includes(`conversation ${name}`)))!;
    // Conversation one runs on a session while conversation two is placed on the other (least loaded).
    const first = call("/v1/chat/completions", { json: { model: "m", messages: conv("one"), stream: true } }, browserOnly(model));
    await Promise.race([a.next((m) => m.type === "request"), b.next((m) => m.type === "request")]);
    const second = call("/v1/chat/completions", { json: { model: "m", messages: conv("two"), stream: true } }, browserOnly(model));
    await Promise.all([first, second].map(async (p) => (await p).res.text()));
    const one = holderOf("one");
    const two = holderOf("two");
    expect(one).not.toBe(two);
    // Both idle now: each conversation's later turns find the session that holds it, whichever comes first.
    const history: Record<string, Array<{ role: string; content: string }>> = { one: conv("one"), two: conv("two") };
    for (const [name, holder] of [["two", two], ["one", one], ["two", two], ["one", one]] as const) {
      const before = holder.engine.requests.length;
      const messages = [...history[name]!, { role: "assistant", content: "ok" }, { role: "user", content: `echo: again ${before}` }];
      history[name] = messages;
      const { res } = await call("/v1/chat/completions", { json: { model: "m", messages, stream: true } }, browserOnly(model));
      expect(text((await readSse(res)).frames)).toBe(`again ${before}`);
      expect(holder.engine.requests.length, `conversation ${name}`).toBe(before + 1);
    }
    a.ws.close();
    b.ws.close();
  });
});

describe("context windows of browser sessions", () => {
  it("a prompt longer than the session's announced window is not relayed: 400 context_length_exceeded naming it; a short one is served", async () => {
    const model = uniqueModel();
    const s = await connect();
    await s.hello([model], 1, { contextWindows: { [model]: 256 } });
    const long = "lorem ipsum dolor sit amet ".repeat(200); // 5,400 characters: over 1,000 tokens at the low estimate
    const refused = await call("/v1/chat/completions", { json: ask(`echo: ${long}`) }, browserOnly(model));
    expect(refused.res.status).toBe(400);
    const body = await refused.res.json<any>();
    expect(body.error.code).toBe("context_length_exceeded");
    expect(body.error.message).toMatch(/^This model's maximum context length is 256 tokens\./);
    expect(s.inbox.filter((m) => m.type === "request")).toHaveLength(0);
    const { res } = await call("/v1/chat/completions", { json: ask("echo: fits") }, browserOnly(model));
    expect(text((await readSse(res)).frames)).toBe("fits");
    s.ws.close();
  });
});

describe("cancellation", () => {
  it("a client that leaves interrupts the running request; the page drains it and the next one starts", async () => {
    const model = uniqueModel();
    const s = await serving(model, { tokenDelayMs: 40 });
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(" ");
    const first = await call("/v1/chat/completions", { json: ask(`echo: ${words}`) }, browserOnly(model));
    const second = call("/v1/chat/completions", { json: ask("echo: after the cancel") }, browserOnly(model));
    const reader = first.res.body!.getReader();
    await reader.read();
    await reader.cancel();
    const cancel = await s.next((m) => m.type === "cancel");
    const firstReq = s.inbox.find((m) => m.type === "request")!;
    expect(cancel.id).toBe(firstReq.id);
    const { res } = await second;
    expect(text((await readSse(res)).frames)).toBe("after the cancel");
    expect(s.maxRunning).toBe(1);
    expect(s.engine.requests.length).toBe(2);
    s.ws.close();
  });

  it("a queued request whose client leaves never reaches the page", async () => {
    const model = uniqueModel();
    const s = await serving(model, { auto: false });
    const running = call("/v1/chat/completions", { json: ask("echo: one") }, browserOnly(model));
    const req = await s.next((m) => m.type === "request");
    const queued = await call("/v1/chat/completions", { json: ask("echo: two") }, browserOnly(model));
    await s.next((m) => m.type === "queue" && m.waiting === 1);
    await queued.res.body!.cancel();
    await s.next((m) => m.type === "queue" && m.waiting === 0);
    await s.answer(req);
    expect(text((await readSse((await running).res)).frames)).toBe("one");
    await new Promise((r) => setTimeout(r, 200));
    expect(s.inbox.filter((m) => m.type === "request").length).toBe(1);
    expect(s.inbox.some((m) => m.type === "cancel")).toBe(false);
    s.ws.close();
  });

  it("the page stopping a generation itself (finish_reason abort) ends the stream with an error frame", async () => {
    const model = uniqueModel();
    const s = await serving(model, { auto: false });
    const pending = call("/v1/chat/completions", { json: ask("hi") }, browserOnly(model));
    const req = await s.next((m) => m.type === "request");
    const base = { id: "u", model, object: "chat.completion.chunk", created: 1 };
    s.send({ type: "chunk", id: req.id, data: { ...base, choices: [{ delta: { content: "Half", role: "assistant" }, finish_reason: null, index: 0, logprobs: null }] } });
    s.send({ type: "chunk", id: req.id, data: { ...base, choices: [{ delta: {}, finish_reason: "abort", index: 0 }] } });
    s.send({ type: "done", id: req.id, usage: null });
    const sse = await readSse((await pending).res);
    expect(text(sse.frames)).toBe("Half");
    expect(sse.done).toBe(false);
    expect(sse.frames.at(-1)!.error.code).toBe("upstream_error");
    expect(sse.frames.some((f) => f.choices?.[0]?.finish_reason)).toBe(false);
    s.ws.close();
  });

  it("a session dropping mid-stream ends that stream with an error frame", async () => {
    const model = uniqueModel();
    const sse = await dropsAfterPartial(model, browserOnly(model));
    expect(text(sse.frames)).toBe("Partial");
    expect(sse.done).toBe(false);
    expect(sse.frames.at(-1)!.error.message).toContain("disconnected");
  });
});

describe("a session that drops mid-answer, with a llama-server for the model", () => {
  it("the llama-server continues the answer: one stream, the text whole, resumes naming both", async () => {
    const model = uniqueModel();
    // A --jinja llama-server continuing a trailing assistant message (test/support/fixture-upstream.mjs `continue`).
    const llama = { kind: "llama", url: `${FIXTURE_URL}/u-resume-${n}/behave/continue/${encodeURIComponent("Partial answer, then the rest.")}` };
    const sse = await dropsAfterPartial(model, vars({ m: { targets: [{ kind: "browser", model }, llama] } }));
    expect(text(sse.frames)).toBe("Partial answer, then the rest.");
    expect(sse.done).toBe(true);
    expect(new Set(sse.frames.filter((f) => f.id).map((f) => f.id)).size).toBe(1);
    const ext = sse.frames.find((f) => f.x_switchyard)?.x_switchyard;
    expect(ext.resumes).toEqual([{ from: `browser:${model}`, to: ext.target, code: "upstream_error", after_chars: 7, after_tokens: 1 }]);
    expect(ext.target).toMatch(/^llama:/);
  });
});

describe("a session that drops", () => {
  it("hands its waiting requests (never sent to it) to another session with the model", async () => {
    const model = uniqueModel();
    const a = await serving(model, { auto: false });
    const running = call("/v1/chat/completions", { json: ask("echo: lost") }, browserOnly(model));
    await a.next((m) => m.type === "request");
    const waiting = call("/v1/chat/completions", { json: ask("echo: moved over") }, browserOnly(model));
    await a.next((m) => m.type === "queue" && m.waiting === 1);
    const b = await serving(model);
    a.ws.close(1001, "tab closed");
    expect(text((await readSse((await waiting).res)).frames)).toBe("moved over");
    // The running one ends with an error: a 502 before the commit grace period, an error frame after it.
    expect(await (await running).res.text()).toContain("disconnected");
    b.ws.close();
  });
});

describe("hibernation and liveness", () => {
  it("sessions survive hibernation: after eviction the same socket still serves; pings are auto-answered", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const stub = env.SESSION_HUB.getByName("hub");
    await evictDurableObject(stub, { webSockets: "hibernate" });
    s.send('{"type":"ping"}');
    await s.next((m) => m.type === "pong");
    const sessions = await stub.sessions();
    expect(sessions.some((x) => x.models.includes(model))).toBe(true);
    const { res } = await call("/v1/chat/completions", { json: ask("echo: awake again") }, browserOnly(model));
    expect(text((await readSse(res)).frames)).toBe("awake again");
    s.ws.close();
  });
});

describe("protocol violations", () => {
  it("a message over 1 MiB closes the socket with 1009", async () => {
    const s = await serving(uniqueModel());
    s.send(JSON.stringify({ type: "chunk", id: "x", data: { object: "chat.completion.chunk", choices: [], pad: "x".repeat(1024 * 1024) } }));
    expect((await s.waitClosed())?.code).toBe(1009);
  });

  it("malformed JSON, an unknown type, or a message before hello closes with 4422", async () => {
    for (const bad of ["{not json", JSON.stringify({ type: "mystery" })]) {
      const s = await serving(uniqueModel());
      s.send(bad);
      expect((await s.waitClosed())?.code).toBe(4422);
    }
    const early = await connect();
    early.send({ type: "done", id: "x" });
    expect((await early.waitClosed())?.code).toBe(4422);
  });

  it("an unsupported version is refused with 4400", async () => {
    const s = await connect();
    s.send({ type: "hello", version: 99, models: ["x"] });
    const closed = await s.waitClosed();
    expect(closed?.code).toBe(4400);
    expect(closed?.reason).toContain("unsupported version 99");
  });

  it("a malformed message mid-request ends that request with an error frame", async () => {
    const model = uniqueModel();
    const s = await serving(model, { auto: false });
    const pending = call("/v1/chat/completions", { json: ask("hi") }, browserOnly(model));
    const req = await s.next((m) => m.type === "request");
    s.send({ type: "chunk", id: req.id, data: { object: "not a chunk" } });
    const { res } = await pending;
    expect(res.status).toBe(502);
    expect((await res.json<any>()).error.message).toContain("broke the relay protocol");
  });
});

describe("zero config with browser sessions", () => {
  it("lists connected sessions' models with the llama-server's, and serves them when the llama-server is down", async () => {
    const model = uniqueModel();
    const s = await serving(model);
    const listed = await call("/v1/models", {}, { SERVE_TOKEN: TOKEN });
    const ids = ((await listed.res.json()) as any).data.map((m: any) => m.id);
    expect(ids).toContain(model);
    expect(ids.length).toBeGreaterThan(1);

    const down = { SERVE_TOKEN: TOKEN, LLAMA_URL: "http://127.0.0.1:9" };
    const { res } = await call("/v1/chat/completions", { json: { ...ask("echo: Served by the tab."), model } }, down);
    expect(res.headers.get("x-switchyard-target")).toBe(`browser:${model}`);
    expect(res.headers.get("x-switchyard-attempts")).toBe("2");
    expect(text((await readSse(res)).frames)).toBe("Served by the tab.");

    // A model no session serves keeps the llama-server's error, not the empty fallback's.
    const other = await call("/v1/chat/completions", { json: ask("hi") }, down);
    expect(other.res.status, await other.res.clone().text()).toBe(502);
    expect(((await other.res.json()) as any).error.code).toBe("upstream_unreachable");
    s.ws.close();
  });
});
