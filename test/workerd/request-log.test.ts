import { describe, expect, it } from "vitest";
import { call, createKey, FIXTURE_URL, keyedVars, parseSse, received } from "./harness.ts";

// The request log (GET /v1/admin/requests, /v1/admin/requests/{id}): each field against what the
// client itself saw, through the whole Worker in workerd against the fixture upstream. Each case has
// a log of its own (REQUEST_LOG_NAME) and a key store of its own.

let n = 0;
/** A fixture URL of its own (its own health record and circuit). */
const fx = (path: string) => `${FIXTURE_URL}/u-log${Date.now().toString(36)}${++n}/${path}`;
const llama = (url: string) => ({ kind: "llama", url });
const SAY = "Hello from the fixture";

function deployment(targets: unknown[], extra: Record<string, unknown> = {}) {
  return keyedVars({
    REQUEST_LOG_NAME: `log-${crypto.randomUUID()}`,
    SWITCHYARD_CONFIG: JSON.stringify({ models: { m: { targets } }, timeouts: { commitMs: 2000, responseStartMs: 1500, firstTokenMs: 1500 }, ...extra }),
  });
}

type Vars = ReturnType<typeof deployment>;
type Row = Record<string, any>;

const admin = (vars: Vars) => ({ authorization: `Bearer ${vars.ADMIN_TOKEN}` });

async function list(vars: Vars, query = ""): Promise<Row[]> {
  const { res } = await call(`/v1/admin/requests${query}`, { headers: admin(vars) }, vars);
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Row[] }).data;
}

/** The log's entry for request `id`, once it was written (the isolate sends its batch when asked). */
async function logged(vars: Vars, id: string): Promise<Row> {
  for (let i = 0; ; i++) {
    const { res } = await call(`/v1/admin/requests/${encodeURIComponent(id)}`, { headers: admin(vars) }, vars);
    if (res.status === 200) return res.json();
    expect(res.status).toBe(404);
    if (i > 40) throw new Error(`request ${id} was never logged`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const chatBody = (extra: Record<string, unknown> = {}) => ({ model: "m", messages: [{ role: "user", content: "hi" }], ...extra });

describe("the request log records what the client got", () => {
  it("a stream: status, target, attempts, usage and time to first token from its frames", async () => {
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))]);
    const started = Date.now();
    const { res } = await call("/v1/chat/completions", { json: chatBody({ stream: true, stream_options: { include_usage: true } }) }, vars);
    const { frames, done } = parseSse(await res.text());
    const elapsed = Date.now() - started;
    expect(done).toBe(true);
    const usage = frames.find((f) => f.usage)!.usage;
    const ext = frames.find((f) => f.x_switchyard)!.x_switchyard;
    const id = res.headers.get("x-request-id")!;
    const row = await logged(vars, id);
    expect(row).toMatchObject({
      id,
      key: null,
      endpoint: "/v1/chat/completions",
      model: "m",
      stream: true,
      status: res.status,
      error: null,
      target: res.headers.get("x-switchyard-target"),
      attempts: Number(res.headers.get("x-switchyard-attempts")),
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      finish_reasons: ["stop"],
    });
    expect(row.target).toBe(ext.target);
    expect(Math.abs(Date.parse(row.time) - started)).toBeLessThan(1000);
    expect(row.ttft_ms).toBeGreaterThanOrEqual(0);
    expect(row.ttft_ms).toBeLessThanOrEqual(row.duration_ms);
    expect(row.duration_ms).toBeLessThanOrEqual(elapsed + 50);
    // The list answers exactly the contract's fields.
    const [item] = await list(vars);
    expect(Object.keys(item!)).toEqual(["id", "client_request_id", "time", "key", "endpoint", "model", "stream", "status", "error", "target", "attempts", "prompt_tokens", "completion_tokens", "ttft_ms", "duration_ms"]);
    expect(item).toMatchObject({ id, status: 200, stream: true });
  });

  it("a non-stream answer: its body's usage and x_switchyard", async () => {
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))]);
    const { res } = await call("/v1/chat/completions", { json: chatBody() }, vars);
    const body = (await res.json()) as Row;
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(row).toMatchObject({
      stream: false,
      status: 200,
      error: null,
      model: body.model,
      target: body.x_switchyard.target,
      attempts: body.x_switchyard.attempts,
      prompt_tokens: body.usage.prompt_tokens,
      completion_tokens: body.usage.completion_tokens,
    });
    // Read once the body was made: its first event as the client got it, its total a moment later at most.
    expect(row.timings.first_event_ms).toBe(body.x_switchyard.timings.first_event_ms);
    expect(row.timings.total_ms - body.x_switchyard.timings.total_ms).toBeGreaterThanOrEqual(0);
    expect(row.timings.total_ms - body.x_switchyard.timings.total_ms).toBeLessThan(50);
    expect(row.ttft_ms).toBeLessThanOrEqual(row.duration_ms);
  });

  it("a failover: the target that answered and every attempt", async () => {
    const down = llama("http://127.0.0.1:9");
    const up = llama(fx(`behave/say/${encodeURIComponent(SAY)}`));
    const vars = deployment([down, up], { retries: { perTarget: 1 } });
    const { res } = await call("/v1/chat/completions", { json: chatBody({ stream: true }) }, vars);
    const { frames } = parseSse(await res.text());
    const ext = frames.find((f) => f.x_switchyard)!.x_switchyard;
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(ext.attempts).toBe(2);
    expect(row).toMatchObject({ status: 200, error: null, target: ext.target, attempts: 2 });
    expect(row.target).toBe(`llama:${new URL(up.url).host}`);
  });

  it("an answer continued on another target: its resumes", async () => {
    const a = llama(fx(`behave/error-frame-mid/${encodeURIComponent("Paris is")}`));
    const b = llama(fx(`behave/continue/${encodeURIComponent("Paris is the capital.")}`));
    const vars = deployment([a, b]);
    const { res } = await call("/v1/chat/completions", { json: chatBody({ stream: true, stream_options: { include_usage: true } }) }, vars);
    const { frames } = parseSse(await res.text());
    const ext = frames.find((f) => f.x_switchyard)!.x_switchyard;
    const usage = frames.find((f) => f.usage)!.usage;
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(ext.resumes).toHaveLength(1);
    expect(row).toMatchObject({ status: 200, error: null, target: ext.target, attempts: ext.attempts, completion_tokens: usage.completion_tokens });
    expect(row.resumes).toEqual(ext.resumes.map((r: Row) => ({ from: r.from, to: r.to, code: r.code })));
  });

  it("a 400: the code the client got, and the model from the request", async () => {
    const vars = deployment([llama(fx("behave/say/x"))]);
    const { res } = await call("/v1/chat/completions", { json: chatBody({ temperature: "hot", stream: true }) }, vars);
    const body = (await res.json()) as Row;
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(row).toMatchObject({ status: 400, error: body.error.code, model: "m", stream: true, target: null, prompt_tokens: null, ttft_ms: null });
  });

  it("a 400 whose body set no stream, or was not JSON: stream false, as the client asked (issue 40, finding 11)", async () => {
    const vars = deployment([llama(fx("behave/say/x"))]);
    for (const init of [{ json: { model: "m", temperature: "hot", messages: [{ role: "user", content: "hi" }] } }, { method: "POST", body: "not json", headers: { "content-type": "application/json" } }]) {
      const { res } = await call("/v1/chat/completions", init, vars);
      expect(res.status).toBe(400);
      await res.arrayBuffer();
      const row = await logged(vars, res.headers.get("x-request-id")!);
      expect(row).toMatchObject({ status: 400, stream: false });
    }
  });

  it("a 502 after every target failed: the attempts and each target's outcome", async () => {
    const vars = deployment([llama("http://127.0.0.1:9"), llama("http://127.0.0.1:7")], { retries: { perTarget: 1 } });
    // A declared length, as HTTP clients send: the route reads the body whole, and the log reads those bytes back.
    const sent = JSON.stringify(chatBody());
    const { res } = await call("/v1/chat/completions", { method: "POST", body: sent, headers: { "content-type": "application/json", "content-length": String(sent.length) } }, vars);
    const body = (await res.json()) as Row;
    expect(res.status).toBe(502);
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(row).toMatchObject({ status: 502, error: body.error.code, model: "m", stream: false, attempts: Number(res.headers.get("x-switchyard-attempts")) });
    expect(row.outcomes).toEqual(body.x_switchyard.outcomes.map((o: Row) => ({ target: o.target, code: o.code })));
    expect((await list(vars, "?status=error")).map((r) => r.id)).toEqual([row.id]);
  });

  it("a stream that ends in an error frame: status 200, the frame's code", async () => {
    const vars = deployment([llama(fx(`behave/error-frame-mid/${encodeURIComponent("Half an answer")}`))], { resume: { maxResumes: 0 } });
    const { res } = await call("/v1/chat/completions", { json: chatBody({ stream: true }) }, vars);
    const { frames } = parseSse(await res.text());
    const code = frames.find((f) => f.error)!.error.code;
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(row).toMatchObject({ status: 200, error: code, stream: true });
    expect(row.ttft_ms).toBeGreaterThanOrEqual(0);
  });

  it("/v1/messages, stream: usage from message_start and message_delta", async () => {
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))]);
    const { res } = await call("/v1/messages", { json: { model: "m", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] } }, vars);
    const { frames } = parseSse(await res.text());
    const delta = frames.find((f) => f.type === "message_delta")!;
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(row).toMatchObject({
      endpoint: "/v1/messages",
      model: "m",
      stream: true,
      status: 200,
      error: null,
      prompt_tokens: delta.usage.input_tokens + delta.usage.cache_read_input_tokens,
      completion_tokens: delta.usage.output_tokens,
      // In OpenAI's words whatever the API (the Messages answer said end_turn).
      finish_reasons: ["stop"],
    });
    expect(delta.delta.stop_reason).toBe("end_turn");
  });

  it("/v1/responses, stream and non-stream: usage and target from the response", async () => {
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))]);
    for (const stream of [true, false]) {
      const { res } = await call("/v1/responses", { json: { model: "m", input: "hi", stream, store: false } }, vars);
      const response = stream ? parseSse(await res.text()).frames.find((f) => f.type === "response.completed")!.response : ((await res.json()) as Row);
      const row = await logged(vars, res.headers.get("x-request-id")!);
      expect(row).toMatchObject({
        endpoint: "/v1/responses",
        stream,
        status: 200,
        error: null,
        model: response.model,
        target: response.x_switchyard.target,
        attempts: response.x_switchyard.attempts,
        prompt_tokens: response.usage.input_tokens,
        completion_tokens: response.usage.output_tokens,
        finish_reasons: ["stop"],
      });
      expect(response.status).toBe("completed");
    }
  });

  it("/v1/completions and /v1/embeddings", async () => {
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))]);
    const { res } = await call("/v1/completions", { json: { model: "m", prompt: "hi" } }, vars);
    const body = (await res.json()) as Row;
    expect((await logged(vars, res.headers.get("x-request-id")!)).completion_tokens).toBe(body.usage.completion_tokens);

    const ev = deployment([llama(fx("behave/embed"))]);
    const e = await call("/v1/embeddings", { json: { model: "m", input: "hi" } }, ev);
    const eb = (await e.res.json()) as Row;
    expect(e.res.status).toBe(200);
    expect(await logged(ev, e.res.headers.get("x-request-id")!)).toMatchObject({ endpoint: "/v1/embeddings", stream: false, status: 200, prompt_tokens: eb.usage.prompt_tokens, target: eb.x_switchyard.target });
  });
});

describe("the request log's access, filters and bounds", () => {
  it("admin token or admin key only: 401 without a credential, 403 for a key without admin", async () => {
    const vars = deployment([llama(fx("behave/say/x"))]);
    expect((await call("/v1/admin/requests", {}, vars)).res.status).toBe(401);
    const user = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const refused = await call("/v1/admin/requests", { headers: { authorization: `Bearer ${user.key}` } }, vars);
    expect(refused.res.status).toBe(403);
    expect(((await refused.res.json()) as Row).error.code).toBe("insufficient_scope");
    const boss = await createKey(vars, { name: "boss", scopes: ["admin"] });
    expect((await call("/v1/admin/requests", { headers: { authorization: `Bearer ${boss.key}` } }, vars)).res.status).toBe(200);
    expect((await call("/v1/admin/requests/req_nope", { headers: { authorization: `Bearer ${user.key}` } }, vars)).res.status).toBe(403);
  });

  it("?key, ?status=error and ?limit, combined; 404 in the error envelope for an unknown id", async () => {
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))]);
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const bob = await createKey(vars, { name: "bob", scopes: ["chat"] });
    const ids: { alice: string[]; bob: string[] } = { alice: [], bob: [] };
    for (const [who, key, bad] of [["alice", alice, false], ["bob", bob, false], ["alice", alice, true], ["alice", alice, false], ["bob", bob, true]] as const) {
      const { res } = await call("/v1/chat/completions", { json: bad ? { model: "m" } : chatBody(), headers: { authorization: `Bearer ${key.key}` } }, vars);
      await res.arrayBuffer();
      ids[who].push(res.headers.get("x-request-id")!);
    }
    await logged(vars, ids.bob.at(-1)!);
    for (const id of [...ids.alice, ...ids.bob]) await logged(vars, id);
    const all = await list(vars);
    expect(all.map((r) => r.id)).toEqual([ids.bob[1], ids.alice[2], ids.alice[1], ids.bob[0], ids.alice[0]]);
    expect((await list(vars, `?key=${alice.id}`)).map((r) => r.id)).toEqual([ids.alice[2], ids.alice[1], ids.alice[0]]);
    expect((await list(vars, "?key=alice")).every((r) => r.key === alice.id)).toBe(true);
    expect((await list(vars, `?key=${alice.id}&status=error`)).map((r) => r.id)).toEqual([ids.alice[1]]);
    expect((await list(vars, `?key=${alice.id}&limit=2`)).map((r) => r.id)).toEqual([ids.alice[2], ids.alice[1]]);
    expect((await list(vars, "?status=error&limit=1")).map((r) => r.id)).toEqual([ids.bob[1]]);

    const unknown = await call("/v1/admin/requests/req_unknown", { headers: admin(vars) }, vars);
    expect(unknown.res.status).toBe(404);
    expect(((await unknown.res.json()) as Row).error).toMatchObject({ code: "request_not_found", param: "id" });
    const bad = await call("/v1/admin/requests?status=ok", { headers: admin(vars) }, vars);
    expect(bad.res.status).toBe(400);
  });

  it("keeps at most maxRecords, the newest", async () => {
    const vars = deployment([llama(fx("behave/say/x"))], { observability: { maxRecords: 10 } });
    const ids: string[] = [];
    for (let i = 0; i < 13; i++) {
      const { res } = await call("/v1/chat/completions", { json: { model: "m" } }, vars);
      await res.arrayBuffer();
      ids.push(res.headers.get("x-request-id")!);
    }
    await logged(vars, ids.at(-1)!);
    const rows = await list(vars, "?limit=100");
    expect(rows.map((r) => r.id)).toEqual(ids.slice(-10).reverse());
    expect((await call(`/v1/admin/requests/${ids[0]}`, { headers: admin(vars) }, vars)).res.status).toBe(404);
  });

  it("requests refused before a key was known go to a small pool of their own: a flood of them evicts no keyed record (issue 40, finding 7)", async () => {
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))], { observability: { maxRecords: 10 } });
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const { res: keyed } = await call("/v1/chat/completions", { json: chatBody(), headers: { authorization: `Bearer ${alice.key}` } }, vars);
    expect(keyed.status).toBe(200);
    await keyed.arrayBuffer();
    const keyedId = keyed.headers.get("x-request-id")!;
    await logged(vars, keyedId);
    /** The requests /metrics counts with no target (those refused before a key was known among them). */
    const unserved = async () => {
      const { res } = await call("/metrics", { headers: admin(vars) }, vars);
      return [...(await res.text()).matchAll(/^switchyard_requests_total\{target="none",code="[^"]*"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
    };
    const before = await unserved();
    // maxRecords + 20 requests without a key, and with a wrong one.
    for (let i = 0; i < 30; i++) {
      const { res, done } = await call("/v1/chat/completions", { json: chatBody(), headers: i % 10 === 1 ? { authorization: "Bearer sk-wrong-0123456789" } : {} }, vars);
      expect([401, 429]).toContain(res.status);
      await res.arrayBuffer();
      await done();
    }
    expect((await logged(vars, keyedId)).key).toBe(alice.id);
    expect((await list(vars, "?limit=100")).map((r) => r.id)).toEqual([keyedId]);
    const refused = await list(vars, "?unauthenticated=true&limit=100");
    expect(refused).toHaveLength(10);
    expect(refused.every((r) => r.key === null && [401, 429].includes(r.status))).toBe(true);
    const { res: stats } = await call("/v1/admin/observability", { headers: admin(vars) }, vars);
    expect(((await stats.json()) as Row).log).toMatchObject({ max_unauthenticated: 10, stored: { requests: 1, unauthenticated: 10 } });
    expect((await call("/v1/admin/requests?unauthenticated=yes", { headers: admin(vars) }, vars)).res.status).toBe(400);
    // Every one of them is counted, though the pool keeps 10.
    expect((await unserved()) - before).toBeGreaterThanOrEqual(30);
  });

  it("a client's own id is kept beside Switchyard's: it cannot shadow another request's record (issue 40, finding 8)", async () => {
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))]);
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const shared = `shared-${crypto.randomUUID()}`;
    const { res: keyed } = await call("/v1/chat/completions", { json: chatBody(), headers: { authorization: `Bearer ${alice.key}`, "x-request-id": shared } }, vars);
    expect(keyed.status).toBe(200);
    await keyed.arrayBuffer();
    const keyedId = keyed.headers.get("x-request-id")!;
    expect(keyedId).toMatch(/^req_/);
    expect(keyed.headers.get("x-client-request-id")).toBe(shared);
    // OpenAI's clients send x-client-request-id: taken the same way.
    const { res: anonymous } = await call("/v1/chat/completions", { json: chatBody(), headers: { "x-client-request-id": shared } }, vars);
    expect(anonymous.status).toBe(401);
    await anonymous.arrayBuffer();
    expect(anonymous.headers.get("x-request-id")).not.toBe(keyedId);
    expect(anonymous.headers.get("x-client-request-id")).toBe(shared);
    await logged(vars, anonymous.headers.get("x-request-id")!);
    expect(await logged(vars, keyedId)).toMatchObject({ id: keyedId, client_request_id: shared, key: alice.id, status: 200 });
    // A client's id is no record's id; the list finds every request that sent it, each with its own key.
    expect((await call(`/v1/admin/requests/${shared}`, { headers: admin(vars) }, vars)).res.status).toBe(404);
    expect((await list(vars, `?client_request_id=${shared}`)).map((r) => [r.id, r.key])).toEqual([[keyedId, alice.id]]);
    expect((await list(vars, `?client_request_id=${shared}&unauthenticated=true`)).map((r) => [r.id, r.key])).toEqual([[anonymous.headers.get("x-request-id"), null]]);
    // The upstream got Switchyard's id, and the client's beside it.
    const sent = (await received()).filter((r) => r.headers["x-request-id"] === keyedId);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent[0]!.headers["x-client-request-id"]).toBe(shared);
  });

  it('"log": false keeps nothing and says so', async () => {
    const vars = deployment([llama(fx("behave/say/x"))], { observability: { log: false } });
    const { res } = await call("/v1/chat/completions", { json: chatBody() }, vars);
    await res.arrayBuffer();
    const { res: listed } = await call("/v1/admin/requests", { headers: admin(vars) }, vars);
    expect(listed.status).toBe(404);
    expect(((await listed.json()) as Row).error.code).toBe("request_log_off");
  });
});

describe("capture (opt-in)", () => {
  const secrets = { ADMIN_TOKEN: `adm-${crypto.randomUUID()}`, SERVE_TOKEN: `srv-${crypto.randomUUID()}`, UPSTREAM_KEY: `up-${crypto.randomUUID()}` };

  function captured(extra: Record<string, unknown> = {}, say = SAY) {
    return {
      ...deployment([{ ...llama(fx(`behave/say/${encodeURIComponent(say)}`)), apiKeySecret: "UPSTREAM_KEY" }], { observability: { capture: true, ...extra } }),
      ...secrets,
    } as Vars;
  }

  it("the request and the stream's answer assembled, every configured secret redacted", async () => {
    // The model repeats a secret (as a model quoting its prompt would).
    const vars = captured({}, `Your key is ${secrets.UPSTREAM_KEY}, ok`);
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const content = `tokens: ${secrets.ADMIN_TOKEN} ${secrets.SERVE_TOKEN} ${secrets.UPSTREAM_KEY} and mine ${alice.key}`;
    const { res } = await call("/v1/chat/completions", { json: chatBody({ stream: true, messages: [{ role: "user", content }] }), headers: { authorization: `Bearer ${alice.key}` } }, vars);
    expect(res.headers.get("x-switchyard-capture")).toBe("on");
    const { frames } = parseSse(await res.text());
    const said = frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join("");
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(row.key).toBe(alice.id);
    const { request, response, truncated } = row.capture;
    expect(truncated).toBe(false);
    for (const secret of [...Object.values(secrets), alice.key]) {
      expect(request).not.toContain(secret);
      expect(response).not.toContain(secret);
    }
    expect(JSON.parse(request).messages[0].content).toBe(`tokens: [redacted] [redacted] [redacted] and mine [redacted]`);
    expect(JSON.parse(response).text).toBe(said.split(secrets.UPSTREAM_KEY).join("[redacted]"));
  });

  it("a non-stream answer as sent; a part over captureMaxBytes cut with the marker", async () => {
    const vars = captured({ captureMaxBytes: 1024 });
    const long = "x".repeat(5000);
    const { res } = await call("/v1/chat/completions", { json: chatBody({ messages: [{ role: "user", content: long }] }) }, vars);
    const body = (await res.json()) as Row;
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(row.capture.truncated).toBe(true);
    expect(new TextEncoder().encode(row.capture.request).length).toBeLessThanOrEqual(1024);
    expect(row.capture.request.endsWith("…[truncated by Switchyard]")).toBe(true);
    expect(JSON.parse(row.capture.response).choices[0].message.content).toBe(body.choices[0].message.content);
  });

  it("a tool call the model wrote as text: the call as the client got it, and the model's raw text beside it", async () => {
    const wrote = 'Let me check. <tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>';
    const vars = captured({}, wrote);
    const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
    for (const stream of [true, false]) {
      const { res } = await call("/v1/chat/completions", { json: chatBody({ stream, tools }) }, vars);
      const text = await res.text();
      const row = await logged(vars, res.headers.get("x-request-id")!);
      expect(row.finish_reasons).toEqual(["tool_calls"]);
      const response = JSON.parse(row.capture.response);
      if (stream) {
        const { frames } = parseSse(text);
        const args = frames.flatMap((f) => f.choices?.[0]?.delta?.tool_calls ?? []).map((c: Row) => c.function?.arguments ?? "").join("");
        expect(response.tool_calls).toEqual([{ name: "get_weather", arguments: args }]);
        expect(response.raw_text).toBe(wrote);
      } else {
        // A non-stream answer is captured as sent.
        expect(response.choices[0].message.tool_calls[0].function.name).toBe("get_weather");
      }
    }
  });

  it("a routers[] server's key and an openai target's header values are redacted too (issue 40, finding 9)", async () => {
    const routerKey = `rk-${crypto.randomUUID()}`;
    const headerKey = `hk-${crypto.randomUUID()}`;
    const routed = {
      ...keyedVars({ REQUEST_LOG_NAME: `log-${crypto.randomUUID()}`, SWITCHYARD_CONFIG: JSON.stringify({ routers: [{ url: fx(`behave/say/${encodeURIComponent(SAY)}`), apiKeySecret: "ROUTER_KEY" }], observability: { capture: true } }) }),
      ROUTER_KEY: routerKey,
    } as Vars;
    const gateway = deployment([{ kind: "openai", url: fx(`behave/say/${encodeURIComponent(SAY)}`), headers: { "x-gateway-key": headerKey } }], { observability: { capture: true } });
    for (const vars of [routed, gateway]) {
      const content = `the router's key ${routerKey} and the gateway's ${headerKey}`;
      const { res } = await call("/v1/chat/completions", { json: chatBody({ messages: [{ role: "user", content }] }) }, vars);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const row = await logged(vars, res.headers.get("x-request-id")!);
      const request = JSON.parse(row.capture.request);
      expect(request.messages[0].content).toBe(vars === routed ? `the router's key [redacted] and the gateway's ${headerKey}` : `the router's key ${routerKey} and the gateway's [redacted]`);
    }
  });

  it("off by default: no capture kept", async () => {
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))]);
    const prompt = `a prompt ${crypto.randomUUID()}`;
    const { res } = await call("/v1/chat/completions", { json: chatBody({ messages: [{ role: "user", content: prompt }] }) }, vars);
    await res.arrayBuffer();
    expect(res.headers.get("x-switchyard-capture")).toBeNull();
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(row.capture).toBeUndefined();
    expect(JSON.stringify(row)).not.toContain(prompt);
  });
});

describe("capture for one key (the key's capture flag)", () => {
  const secrets = { ADMIN_TOKEN: `adm-${crypto.randomUUID()}`, SERVE_TOKEN: `srv-${crypto.randomUUID()}`, UPSTREAM_KEY: `up-${crypto.randomUUID()}` };
  /** A keyed deployment whose observability is `observability` (no deployment-wide capture unless it says so). */
  const keyed = (observability: Record<string, unknown> = {}) =>
    ({ ...deployment([{ ...llama(fx(`behave/say/${encodeURIComponent(SAY)}`)), apiKeySecret: "UPSTREAM_KEY" }], { observability }), ...secrets }) as Vars;
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const patch = (vars: Vars, id: string, json: unknown) => call(`/v1/admin/keys/${id}`, { method: "PATCH", json, headers: admin(vars) }, vars);

  it("its requests are captured, stream and not, its own key redacted, and its responses say so; another key's are not", async () => {
    const vars = keyed();
    const alice = (await createKey(vars, { name: "alice", scopes: ["chat"], capture: true })) as Awaited<ReturnType<typeof createKey>> & { capture: boolean };
    const bob = await createKey(vars, { name: "bob", scopes: ["chat"] });
    expect(alice.capture).toBe(true);
    const { res: listed } = await call("/v1/admin/keys", { headers: admin(vars) }, vars);
    expect(((await listed.json()) as { data: Row[] }).data.map((k) => [k.name, k.capture])).toEqual([["alice", true], ["bob", false]]);

    for (const stream of [true, false]) {
      const content = `mine ${alice.key} and ${secrets.ADMIN_TOKEN}`;
      const { res } = await call("/v1/chat/completions", { json: chatBody({ stream, messages: [{ role: "user", content }] }), headers: bearer(alice.key) }, vars);
      expect(res.headers.get("x-switchyard-capture")).toBe("on");
      const text = await res.text();
      const row = await logged(vars, res.headers.get("x-request-id")!);
      expect(row.key).toBe(alice.id);
      const { request, response, truncated } = row.capture;
      expect(truncated).toBe(false);
      expect(request).not.toContain(alice.key);
      expect(JSON.parse(request)).toMatchObject({ model: "m", messages: [{ role: "user", content: "mine [redacted] and [redacted]" }] });
      if (stream) expect(JSON.parse(response)).toEqual({ text: parseSse(text).frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join(""), reasoning: "", tool_calls: [] });
      else expect(JSON.parse(response).choices[0].message.content).toBe(JSON.parse(text).choices[0].message.content);
    }

    // A request its route refuses as invalid is captured too, with the error it got.
    const invalid = await call("/v1/chat/completions", { json: { model: "m" }, headers: bearer(alice.key) }, vars);
    expect(invalid.res.status).toBe(400);
    expect(invalid.res.headers.get("x-switchyard-capture")).toBe("on");
    const refused = await logged(vars, invalid.res.headers.get("x-request-id")!);
    expect(JSON.parse(refused.capture.request)).toEqual({ model: "m" });
    expect(JSON.parse(refused.capture.response).error.code).toBeDefined();

    const prompt = `bob's prompt ${crypto.randomUUID()}`;
    for (const stream of [true, false]) {
      const { res } = await call("/v1/chat/completions", { json: chatBody({ stream, messages: [{ role: "user", content: prompt }] }), headers: bearer(bob.key) }, vars);
      await res.arrayBuffer();
      expect(res.headers.get("x-switchyard-capture")).toBeNull();
      const row = await logged(vars, res.headers.get("x-request-id")!);
      expect(row.key).toBe(bob.id);
      expect(row.capture).toBeUndefined();
      expect(JSON.stringify(row)).not.toContain(prompt);
    }
  });

  it("a body that is not JSON is captured as the text it was, for the key and deployment-wide, its secrets redacted", async () => {
    for (const observability of [{}, { capture: true }]) {
      const vars = keyed(observability);
      const alice = await createKey(vars, { name: "alice", scopes: ["chat"], capture: true });
      const sent = `{"model": "m", "messages": [{"role": "user", "content": "cut short, ${alice.key}"}`;
      const { res } = await call("/v1/chat/completions", { method: "POST", body: sent, headers: { ...bearer(alice.key), "content-type": "application/json" } }, vars);
      expect(res.status).toBe(400);
      expect(res.headers.get("x-switchyard-capture")).toBe("on");
      const told = await res.text();
      expect(JSON.parse(told).error.code).toBe("invalid_json");
      const row = await logged(vars, res.headers.get("x-request-id")!);
      expect(row).toMatchObject({ key: alice.id, status: 400, error: "invalid_json" });
      expect(row.capture.request).toBe(sent.replace(alice.key, "[redacted]"));
      expect(JSON.parse(row.capture.response)).toEqual(JSON.parse(told));
    }
  });

  it("a secret its client's JSON encoder escaped is redacted too (the parsed body is kept written again as JSON)", async () => {
    const vars = keyed();
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"], capture: true });
    // The key with its first character written as a \u escape, as some encoders write characters.
    const escaped = `\\u${alice.key.charCodeAt(0).toString(16).padStart(4, "0")}${alice.key.slice(1)}`;
    const sent = `{"model": "m", "messages": [{"role": "user", "content": "mine: ${escaped}"}]}`;
    expect(JSON.parse(sent).messages[0].content).toBe(`mine: ${alice.key}`);
    const { res } = await call("/v1/chat/completions", { method: "POST", body: sent, headers: { ...bearer(alice.key), "content-type": "application/json" } }, vars);
    await res.arrayBuffer();
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(JSON.parse(row.capture.request).messages[0].content).toBe("mine: [redacted]");
  });

  it("a request its key's limits refuse before the route reads the body (429) is captured too, as sent", async () => {
    const vars = keyed();
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"], capture: true, limits: { rpm: 1 } });
    const first = await call("/v1/chat/completions", { json: chatBody(), headers: bearer(alice.key) }, vars);
    await first.res.arrayBuffer();
    expect(first.res.status).toBe(200);
    const content = `over the limit, ${alice.key}`;
    const { res } = await call("/v1/chat/completions", { json: chatBody({ messages: [{ role: "user", content }] }), headers: bearer(alice.key) }, vars);
    expect(res.status).toBe(429);
    expect(res.headers.get("x-switchyard-capture")).toBe("on");
    const sent = await res.text();
    const row = await logged(vars, res.headers.get("x-request-id")!);
    expect(row).toMatchObject({ key: alice.id, status: 429, error: "rate_limit_exceeded" });
    expect(JSON.parse(row.capture.request)).toMatchObject({ model: "m", messages: [{ role: "user", content: "over the limit, [redacted]" }] });
    expect(JSON.parse(row.capture.response)).toEqual(JSON.parse(sent));
  });

  it("turned off through the admin API, capture stops at once; the field must be a boolean", async () => {
    const vars = keyed();
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"], capture: true });
    const ask = async () => {
      const { res } = await call("/v1/chat/completions", { json: chatBody(), headers: bearer(alice.key) }, vars);
      await res.arrayBuffer();
      return { told: res.headers.get("x-switchyard-capture"), row: await logged(vars, res.headers.get("x-request-id")!) };
    };
    const before = await ask();
    expect(before.told).toBe("on");
    expect(before.row.capture).toBeDefined();

    const off = await patch(vars, alice.id, { capture: false });
    expect(off.res.status).toBe(200);
    expect(await off.res.json()).toMatchObject({ id: alice.id, capture: false });
    const after = await ask();
    expect(after.told).toBeNull();
    expect(after.row.capture).toBeUndefined();

    for (const capture of ["yes", 1, null]) {
      const bad = await patch(vars, alice.id, { capture });
      expect(bad.res.status).toBe(400);
      expect(((await bad.res.json()) as Row).error.param).toBe("capture");
    }
    const create = await call("/v1/admin/keys", { json: { name: "carol", scopes: ["chat"], capture: "on" }, headers: admin(vars) }, vars);
    expect(create.res.status).toBe(400);
    // Only an admin sets it: a key cannot turn its own capture on or off.
    const own = await call(`/v1/admin/keys/${alice.id}`, { method: "PATCH", json: { capture: true }, headers: bearer(alice.key) }, vars);
    expect(own.res.status).toBe(403);
  });

  it('with "log": false a key\'s capture keeps nothing and its responses say nothing', async () => {
    const vars = keyed({ log: false });
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"], capture: true });
    for (const stream of [true, false]) {
      const { res } = await call("/v1/chat/completions", { json: chatBody({ stream }), headers: bearer(alice.key) }, vars);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      expect(res.headers.get("x-switchyard-capture")).toBeNull();
    }
    const { res: listed } = await call("/v1/admin/requests", { headers: admin(vars) }, vars);
    expect(listed.status).toBe(404);
  });

  it("over the Responses WebSocket: the upgrade says so, and each response.create is captured", async () => {
    const { createExecutionContext, env } = await import("cloudflare:test");
    const { createApp } = await import("../../src/app.ts");
    const vars = keyed();
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"], capture: true });
    const res = await createApp().fetch(new Request("http://switchyard.test/v1/responses", { headers: { upgrade: "websocket", ...bearer(alice.key) } }), { ...env, ...vars }, createExecutionContext());
    expect(res.status).toBe(101);
    expect(res.headers.get("x-switchyard-capture")).toBe("on");
    const ws = res.webSocket!;
    ws.accept();
    const completed = new Promise<Row>((resolve) =>
      ws.addEventListener("message", (e) => {
        const m = JSON.parse(e.data as string);
        if (m.type === "response.completed" || m.type === "error") resolve(m);
      }),
    );
    ws.send(JSON.stringify({ type: "response.create", model: "m", store: false, input: "hi from the socket" }));
    expect((await completed).type).toBe("response.completed");
    ws.close();
    let rows: Row[] = [];
    for (let i = 0; i < 40 && rows.length === 0; i++) {
      rows = await list(vars);
      if (!rows.length) await new Promise((r) => setTimeout(r, 50));
    }
    expect(rows).toHaveLength(1);
    const row = await logged(vars, rows[0]!.id);
    expect(JSON.parse(row.capture.request)).toMatchObject({ model: "m", input: "hi from the socket", stream: true });
    expect(JSON.parse(row.capture.response).text).toBe(SAY);
  });
});

describe("the Responses WebSocket", () => {
  it("each response.create is logged as a /v1/responses stream", async () => {
    const { createExecutionContext, env } = await import("cloudflare:test");
    const { createApp } = await import("../../src/app.ts");
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))]);
    const res = await createApp().fetch(new Request("http://switchyard.test/v1/responses", { headers: { upgrade: "websocket" } }), { ...env, ...vars }, createExecutionContext());
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    ws.accept();
    const got: Row[] = [];
    const completed = new Promise<Row>((resolve) =>
      ws.addEventListener("message", (e) => {
        const m = JSON.parse(e.data as string);
        got.push(m);
        if (m.type === "response.completed" || m.type === "error") resolve(m);
      }),
    );
    ws.send(JSON.stringify({ type: "response.create", model: "m", store: false, input: "hi" }));
    const done = await completed;
    ws.close();
    expect(done.type).toBe("response.completed");
    const rows = await (async () => {
      for (let i = 0; i < 40; i++) {
        const r = await list(vars);
        if (r.length) return r;
        await new Promise((r) => setTimeout(r, 50));
      }
      return [];
    })();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ endpoint: "/v1/responses", model: "m", stream: true, status: 200, error: null, prompt_tokens: done.response.usage.input_tokens, completion_tokens: done.response.usage.output_tokens });
  });
});

describe("traces reach the upstream (issue 31: the client's traceparent passed on)", () => {
  const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
  const CLIENT_SPAN = "00f067aa0ba902b7";

  it("with OTLP export on, each attempt's request carries a traceparent in the client's trace, a span of its own", async () => {
    const marker = `traced-${crypto.randomUUID()}`;
    // A dead collector: the export fails quietly; the attempts' headers are what is looked at.
    const vars = deployment([llama("http://127.0.0.1:9"), llama(fx(`behave/say/${encodeURIComponent(SAY)}`))], { observability: { otlp: { endpoint: "http://127.0.0.1:9" } } });
    const { res } = await call("/v1/chat/completions", { json: chatBody({ messages: [{ role: "user", content: marker }] }), headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } }, vars);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-attempts")).toBe("2");
    await res.text();
    const got = (await (await fetch(`${FIXTURE_URL}/_requests`)).json()) as Array<{ headers: Record<string, string>; body: string }>;
    const sent = got.filter((r) => r.body.includes(marker));
    expect(sent).toHaveLength(1);
    const parent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(sent[0]!.headers.traceparent ?? "");
    expect(parent?.[1]).toBe(CLIENT_TRACE);
    expect(parent?.[2]).not.toBe(CLIENT_SPAN);
  });

  it("without OTLP export, no traceparent goes upstream", async () => {
    const marker = `untraced-${crypto.randomUUID()}`;
    const vars = deployment([llama(fx(`behave/say/${encodeURIComponent(SAY)}`))]);
    const { res } = await call("/v1/chat/completions", { json: chatBody({ messages: [{ role: "user", content: marker }] }), headers: { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` } }, vars);
    expect(res.status).toBe(200);
    await res.text();
    const got = (await (await fetch(`${FIXTURE_URL}/_requests`)).json()) as Array<{ headers: Record<string, string>; body: string }>;
    expect(got.find((r) => r.body.includes(marker))?.headers.traceparent).toBeUndefined();
  });
});

describe("the RequestLog Durable Object (a batch as an isolate sends it)", () => {
  it("a batch larger than one INSERT's rows keeps every row in order, each capture on its own row, and prunes to maxRecords", async () => {
    const { env } = await import("cloudflare:test");
    const log = (env as unknown as { REQUEST_LOG: DurableObjectNamespace<import("../../src/observability/request-log.ts").RequestLog> }).REQUEST_LOG.getByName(`log-${crypto.randomUUID()}`);
    const now = Date.now();
    const rowOf = (i: number): import("../../src/observability/request-log.ts").LogRow => [`req_${i}`, now + i, i % 2 ? "key_a" : null, i % 2 ? "alice" : null, "m", i % 5 === 0 ? 1 : 0, JSON.stringify({ id: `req_${i}`, n: i })];
    const retention = { maxRecords: 40, maxAgeMs: 86_400_000, captureMaxRecords: 3 };
    // 31 rows: two full statements and a partial one; captures on rows 0, 13 and 30.
    await log.add(Array.from({ length: 31 }, (_, i) => rowOf(i)), [0, 13, 30].map((index) => ({ index, capture: `{"c":${index}}` })), retention);
    const listed = (await log.list({ limit: 100 }, retention.maxAgeMs)).map((r) => JSON.parse(r).n);
    expect(listed).toEqual(Array.from({ length: 31 }, (_, i) => 30 - i));
    expect((await log.list({ limit: 100, key: "alice" }, retention.maxAgeMs)).length).toBe(15);
    expect((await log.list({ limit: 100, errorsOnly: true }, retention.maxAgeMs)).map((r) => JSON.parse(r).n)).toEqual([30, 25, 20, 15, 10, 5, 0]);
    for (const i of [0, 13, 30]) expect((await log.get(`req_${i}`, retention.maxAgeMs))?.capture).toBe(`{"c":${i}}`);
    expect((await log.get("req_12", retention.maxAgeMs))?.capture).toBeNull();
    // A second batch: the newest 40 kept (16–55); captures only on rows still kept (30 and 55).
    await log.add(Array.from({ length: 25 }, (_, i) => rowOf(31 + i)), [{ index: 24, capture: '{"c":55}' }], retention);
    expect(await log.counts()).toEqual({ requests: 40, unauthenticated: 0, captures: 2 });
    const kept = (await log.list({ limit: 100 }, retention.maxAgeMs)).map((r) => JSON.parse(r).n);
    expect(kept).toEqual(Array.from({ length: 40 }, (_, i) => 55 - i));
    expect(await log.get("req_13", retention.maxAgeMs)).toBeNull();
    expect((await log.get("req_30", retention.maxAgeMs))?.capture).toBe('{"c":30}');
    expect((await log.get("req_55", retention.maxAgeMs))?.capture).toBe('{"c":55}');
  });

  it("the unauthenticated pool keeps its own newest rows (a tenth of maxRecords, at least 10) and never prunes the log's", async () => {
    const { env } = await import("cloudflare:test");
    const log = (env as unknown as { REQUEST_LOG: DurableObjectNamespace<import("../../src/observability/request-log.ts").RequestLog> }).REQUEST_LOG.getByName(`log-${crypto.randomUUID()}`);
    const now = Date.now();
    type LogRow = import("../../src/observability/request-log.ts").LogRow;
    const keyed = (i: number): LogRow => [`req_k${i}`, now + i, "key_a", "alice", "m", 0, JSON.stringify({ id: `req_k${i}` }), `c${i}`, 0];
    const refused = (i: number): LogRow => [`req_r${i}`, now + i, null, null, null, 1, JSON.stringify({ id: `req_r${i}` }), "same", 1];
    const retention = { maxRecords: 10, maxAgeMs: 86_400_000, captureMaxRecords: 3 };
    await log.add([keyed(0), keyed(1), ...Array.from({ length: 30 }, (_, i) => refused(2 + i)), keyed(32)], [{ index: 1, capture: '{"c":1}' }], retention);
    // Several batches of them: each prunes its pool only.
    for (let b = 0; b < 3; b++) await log.add(Array.from({ length: 25 }, (_, i) => refused(100 + 25 * b + i)), [], retention);
    expect(await log.counts()).toEqual({ requests: 3, unauthenticated: 10, captures: 1 });
    expect((await log.list({ limit: 100 }, retention.maxAgeMs)).map((r) => JSON.parse(r).id)).toEqual(["req_k32", "req_k1", "req_k0"]);
    expect((await log.list({ limit: 100, unauthenticated: true }, retention.maxAgeMs)).map((r) => JSON.parse(r).id)).toEqual(Array.from({ length: 10 }, (_, i) => `req_r${174 - i}`));
    expect((await log.list({ limit: 100, clientRequestId: "c1" }, retention.maxAgeMs)).map((r) => JSON.parse(r).id)).toEqual(["req_k1"]);
    expect((await log.get("req_k1", retention.maxAgeMs))?.capture).toBe('{"c":1}');
  });

  it("an id two rows share (written before ids were Switchyard's own): the keyed row of the log, not an unauthenticated one", async () => {
    const { env } = await import("cloudflare:test");
    const log = (env as unknown as { REQUEST_LOG: DurableObjectNamespace<import("../../src/observability/request-log.ts").RequestLog> }).REQUEST_LOG.getByName(`log-${crypto.randomUUID()}`);
    const now = Date.now();
    const retention = { maxRecords: 10, maxAgeMs: 86_400_000, captureMaxRecords: 3 };
    await log.add([["dup", now, "key_a", "alice", "m", 0, '{"who":"alice"}'], ["dup", now + 5, null, null, null, 1, '{"who":"nobody"}', null, 1]], [], retention);
    expect((await log.get("dup", retention.maxAgeMs))?.record).toBe('{"who":"alice"}');
  });
});
