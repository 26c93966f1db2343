import { describe, expect, it } from "vitest";
import { call, configWith, fixtureModel, FIXTURE_URL, LLAMA_URL, readSse, received, text } from "./harness.ts";

const chat = (extra: Record<string, unknown> = {}) => ({ model: "m", messages: [{ role: "user", content: "hi" }], ...extra });

async function envelope(res: Response) {
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string } };
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  return body.error;
}

describe("errors the proxy originates", () => {
  it("malformed JSON → 400 invalid_json", async () => {
    const { res } = await call("/v1/chat/completions", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect((await envelope(res)).code).toBe("invalid_json");
  });

  it("missing messages → 400 missing_required_parameter naming the field", async () => {
    const { res } = await call("/v1/chat/completions", { json: { model: "m" } });
    expect(res.status).toBe(400);
    expect(await envelope(res)).toMatchObject({ code: "missing_required_parameter", param: "messages", type: "invalid_request_error" });
  });

  it("a wrong field type → 400 invalid_type", async () => {
    const { res } = await call("/v1/chat/completions", { json: chat({ temperature: "hot" }) });
    expect(res.status).toBe(400);
    expect(await envelope(res)).toMatchObject({ code: "invalid_type", param: "temperature" });
  });

  it("an unknown model when models are declared → 404 model_not_found listing the real ones", async () => {
    const { res } = await call("/v1/chat/completions", { json: chat({ model: "nope" }) }, configWith({ qwen: { targets: [{ kind: "llama", url: LLAMA_URL }] } }));
    expect(res.status).toBe(404);
    const e = await envelope(res);
    expect(e.code).toBe("model_not_found");
    expect(e.message).toContain('"qwen"');
  });

  it("a body over the limit → 413 before any upstream is touched", async () => {
    await fetch(`${FIXTURE_URL}/_reset`, { method: "POST" });
    const big = chat({ messages: [{ role: "user", content: "x".repeat(5000) }] });
    const { res } = await call("/v1/chat/completions", { json: big }, fixtureModel("behave/paced/3", { limits: { maxBodyBytes: 1000 } }));
    expect(res.status).toBe(413);
    expect((await envelope(res)).code).toBe("request_too_large");
    expect(await received()).toHaveLength(0);
  });

  it("an invalid SWITCHYARD_CONFIG → 500 config_error naming the field and the fix", async () => {
    const { res } = await call("/v1/chat/completions", { json: chat() }, { SWITCHYARD_CONFIG: JSON.stringify({ models: { m: { targets: [{ kind: "llama", url: "nope" }] } } }) });
    expect(res.status).toBe(500);
    const e = await envelope(res);
    expect(e.code).toBe("config_error");
    expect(e.message).toContain("models.m.targets[0].url");
  });

  it("GET on the chat route → 405; an unknown route → 404 envelope", async () => {
    expect((await call("/v1/chat/completions")).res.status).toBe(405);
    const { res } = await call("/v1/nothing-here");
    expect(res.status).toBe(404);
    expect((await envelope(res)).code).toBe("not_found");
  });
});

describe("upstream failures before the first byte", () => {
  it("unreachable → 502 upstream_unreachable naming the upstream and what to check", async () => {
    const { res } = await call("/v1/chat/completions", { json: chat() }, configWith({ m: { targets: [{ kind: "llama", url: "http://127.0.0.1:9" }] } }));
    expect(res.status).toBe(502);
    const e = await envelope(res);
    expect(e.code).toBe("upstream_unreachable");
    expect(e.message).toContain("llama:127.0.0.1:9");
    expect(e.message).toContain("running");
  });

  it("loading → 503 model_loading with Retry-After (stream too: the status is kept)", async () => {
    for (const stream of [false, true]) {
      const { res } = await call("/v1/chat/completions", { json: chat({ stream }) }, fixtureModel("behave/loading", { queue: { maxWaitMs: 0 } }));
      expect(res.status).toBe(503);
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
      expect((await envelope(res)).code).toBe("model_loading");
    }
  });

  it("an HTML 500 → 502 upstream_error envelope", async () => {
    const { res } = await call("/v1/chat/completions", { json: chat() }, fixtureModel("behave/html-500"));
    expect(res.status).toBe(502);
    expect((await envelope(res)).message).toContain("non-JSON");
  });

  it("a rejected upstream key → 502 without the key anywhere", async () => {
    const secret = "sk-upstream-very-secret-123";
    const { res } = await call(
      "/v1/chat/completions",
      { json: chat() },
      { ...configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/unauthorized`, apiKeySecret: "GPU_KEY" }] } }), GPU_KEY: secret },
    );
    expect(res.status).toBe(502);
    const raw = await res.text();
    expect(raw).not.toContain(secret);
    expect(raw).toContain("apiKeySecret");
  });

  it("fails over to the next target and says how many attempts it took", async () => {
    const { res } = await call(
      "/v1/chat/completions",
      { json: chat({ grammar: 'root ::= "second target"', max_tokens: 50 }) },
      configWith({ m: { targets: [{ kind: "llama", url: "http://127.0.0.1:9" }, { kind: "llama", url: `${FIXTURE_URL}/behave/loading` }, { kind: "llama", url: LLAMA_URL }] } }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("x-switchyard-attempts")).toBe("3");
    const body = (await res.json()) as any;
    expect(body.choices[0].message.content).toBe("second target");
    expect(body.x_switchyard.attempts).toBe(3);
  });

  it("does not fail over on a client mistake", async () => {
    await fetch(`${FIXTURE_URL}/_reset`, { method: "POST" });
    const { res } = await call(
      "/v1/chat/completions",
      { json: chat({ grammar: 'root ::= "bad', max_tokens: 5 }) },
      configWith({ m: { targets: [{ kind: "llama", url: LLAMA_URL }, { kind: "llama", url: `${FIXTURE_URL}/behave/paced/2` }] } }),
    );
    expect(res.status).toBe(400);
    expect(res.headers.get("x-switchyard-attempts")).toBe("1");
    // The second target was never asked to generate (admission may read its slot count from /props).
    expect((await received()).filter((r) => r.path.endsWith("/completions"))).toHaveLength(0);
  });

  it("headers that never come → 504 upstream_timeout within the configured time", async () => {
    const started = Date.now();
    const { res } = await call("/v1/chat/completions", { json: chat(), headers: { "x-request-id": "client-id-504" } }, fixtureModel("behave/stall-headers/5000", { timeouts: { responseStartMs: 300 } }));
    expect(res.status).toBe(504);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    expect(res.headers.get("x-client-request-id")).toBe("client-id-504");
    expect((await envelope(res)).code).toBe("upstream_timeout");
    expect(Date.now() - started).toBeLessThan(1500);
  });
});

describe("after the first byte", () => {
  it("a stall after the first token ends the stream with an error frame, no [DONE]", async () => {
    const { res } = await call("/v1/chat/completions", { json: chat({ stream: true }) }, fixtureModel("behave/stall-after-first/5000", { timeouts: { idleMs: 400 } }));
    expect(res.status).toBe(200);
    const { frames, done } = await readSse(res);
    expect(done).toBe(false);
    expect(text(frames)).toBe("Hello");
    expect(frames.at(-1)).toMatchObject({ error: { code: "upstream_timeout" } });
    expect(frames.some((f) => f.choices?.[0]?.finish_reason)).toBe(false);
  });

  it("a reset mid-stream ends with an error frame, never a silent truncation", async () => {
    const { res } = await call("/v1/chat/completions", { json: chat({ stream: true }) }, fixtureModel("behave/reset-mid"));
    const { frames, done } = await readSse(res);
    expect(done).toBe(false);
    expect(text(frames)).toBe("Par");
    expect(frames.at(-1)!.error.code).toBe("upstream_error");
  });

  it("non-stream: a late failure after commit is an error envelope in the 200 body", async () => {
    const { res } = await call("/v1/chat/completions", { json: chat() }, fixtureModel("behave/stall-after-first/5000", { timeouts: { idleMs: 900, commitMs: 200 } }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-encoding")).toBe("identity");
    const raw = await res.text();
    expect(raw.startsWith(" ")).toBe(true);
    const body = JSON.parse(raw);
    expect(body.error.code).toBe("upstream_timeout");
  });

  it("a stream that is slow to start is committed and kept alive with comments", async () => {
    const { res } = await call("/v1/chat/completions", { json: chat({ stream: true }) }, fixtureModel("fixture/stream-plain-text/gap-300", { timeouts: { commitMs: 100, heartbeatMs: 100 } }));
    const { comments, done } = await readSse(res);
    expect(done).toBe(true);
    expect(comments).toBeGreaterThan(0);
  });
});

describe("header hygiene", () => {
  it("never forwards the client's credentials, cookies or X-Conversation-Id", async () => {
    await fetch(`${FIXTURE_URL}/_reset`, { method: "POST" });
    const { res } = await call(
      "/v1/chat/completions",
      { json: chat({ top_k: 7 }), headers: { authorization: "Bearer client-key", "x-api-key": "client-key-2", cookie: "session=abc", "x-conversation-id": "conv-1" } },
      { ...configWith({ m: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/paced/2`, apiKeySecret: "GPU_KEY" }] } }), GPU_KEY: "upstream-key" },
    );
    await res.text();
    const [req] = await received();
    expect(req!.headers.authorization).toBe("Bearer upstream-key");
    expect(req!.headers["x-api-key"]).toBeUndefined();
    expect(req!.headers.cookie).toBeUndefined();
    expect(req!.headers["x-conversation-id"]).toBeUndefined();
    const body = JSON.parse(req!.body);
    expect(body).toMatchObject({ top_k: 7, stream: true, stream_options: { include_usage: true } });
  });
});
