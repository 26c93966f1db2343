// Limits that hold while requests are in flight (issue 26, findings 8–10): every route that runs a
// model takes a concurrency slot (compact included), tokens are reserved at admission and settled at
// the end, a request without max_tokens gets the key's default bound upstream, and model names are
// bounded on every route that takes one, so a usage row can always be written and charged.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { KeyGate } from "../../src/auth/key-gate.ts";
import { call, configWith, createKey, FIXTURE_URL, keyedVars, LLAMA_URL, received } from "./harness.ts";

const bearer = (key: string) => ({ authorization: `Bearer ${key}`, "cf-connecting-ip": "203.0.113.7" });
const messages = [{ role: "user", content: "hello there" }];
const gateOf = (vars: Record<string, unknown>, id: string) => env.KEY_GATE.getByName(`${vars.KEY_STORE_NAME}:${id}`) as DurableObjectStub<KeyGate>;

async function send(path: string, init: RequestInit & { json?: unknown }, vars: Record<string, unknown>) {
  const { res, done } = await call(path, init, vars);
  const text = await res.text();
  await done();
  return { status: res.status, body: text ? (JSON.parse(text) as any) : null, retryAfter: res.headers.get("retry-after"), requestId: res.headers.get("x-request-id") };
}

async function usageTotals(vars: Record<string, unknown>, key: string) {
  const u = await send("/v1/usage", { headers: bearer(key) }, vars);
  return u.body as { totals: { requests: number; prompt_tokens: number; completion_tokens: number; errors: number }; usage: Array<Record<string, any>> };
}

/** Every route that runs a model, for model `m` (served by `say/hello` or `embed`). */
const GENERATING: Array<[string, (model: string) => unknown]> = [
  ["/v1/chat/completions", (model) => ({ model, messages })],
  ["/chat/completions", (model) => ({ model, messages })],
  ["/v1/responses", (model) => ({ model, input: "hello there", store: false })],
  ["/v1/responses/compact", (model) => ({ model, input: "hello there" })],
  ["/v1/messages", (model) => ({ model, max_tokens: 16, messages })],
  ["/v1/completions", (model) => ({ model, prompt: "hello there" })],
  ["/v1/embeddings", (model) => ({ model, input: "hello there" })],
];

describe("every generating route takes a concurrency slot", () => {
  it("concurrency 1: while a chat stream runs, compact (and every other generating route) is 429; count_tokens is not; after it, compact runs", async () => {
    const vars = keyedVars(
      configWith(
        {
          slow: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/paced/100` }] },
          fast: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hello` }] },
        },
        // No request log: its batch waits up to a second in the waitUntil of the request that started
        // it, and every request here waits for its execution context while the 2 s stream runs.
        { observability: { log: false } },
      ),
    );
    const key = await createKey(vars, { name: "one-at-a-time", scopes: ["chat"], limits: { concurrency: 1 } });
    const stream = await call("/v1/chat/completions", { json: { model: "slow", stream: true, messages }, headers: bearer(key.key) }, vars);
    expect(stream.res.status).toBe(200);
    const reader = stream.res.body!.getReader();
    await reader.read();
    expect(await gateOf(vars, key.id).activeLeases()).toBe(1);

    const compact = await send("/v1/responses/compact", { json: { model: "fast", input: "hello there" }, headers: bearer(key.key) }, vars);
    expect(compact.status, JSON.stringify(compact.body)).toBe(429);
    expect(compact.body.error.code).toBe("concurrency_limit_exceeded");
    for (const [path, body] of GENERATING) {
      const r = await send(path, { json: body("fast"), headers: bearer(key.key) }, vars);
      expect(r.status, path).toBe(429);
      expect(r.body.error.code ?? r.body.error.type, path).toMatch(/concurrency_limit_exceeded|rate_limit_error/);
    }
    const count = await send("/v1/messages/count_tokens", { json: { model: "fast", messages }, headers: bearer(key.key) }, vars);
    expect(count.status).not.toBe(429);

    await reader.cancel();
    await stream.done();
    expect(await gateOf(vars, key.id).activeLeases()).toBe(0);
    const after = await send("/v1/responses/compact", { json: { model: "fast", input: "hello there" }, headers: bearer(key.key) }, vars);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(await gateOf(vars, key.id).activeLeases()).toBe(0);
  });
});

describe("tokens per day hold while requests are in flight", () => {
  it("a 400-token day, 8 requests at once with max_tokens 100: at most 4 admitted (1: each reserves its prompt and twice 100), at most 400 served", async () => {
    const vars = keyedVars(configWith({ long: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/u-day400/behave/paced/100` }] } }));
    const key = await createKey(vars, { name: "day400", scopes: ["chat"], limits: { tokensPerDay: 400 } });
    // paced/100 streams for 2 s and reports 3 + 100 tokens: all 8 overlap.
    const results = await Promise.all(
      Array.from({ length: 8 }, () => send("/v1/chat/completions", { json: { model: "long", max_tokens: 100, messages }, headers: bearer(key.key) }, vars)),
    );
    const admitted = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 429);
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThanOrEqual(4);
    expect(admitted + refused.length).toBe(8);
    for (const r of refused) {
      expect(r.body.error.code).toBe("tokens_per_day_exceeded");
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    const u = await usageTotals(vars, key.key);
    expect(u.totals.requests).toBe(admitted);
    expect(u.totals.prompt_tokens + u.totals.completion_tokens).toBeLessThanOrEqual(400);
    expect(await gateOf(vars, key.id).reservedTokens()).toBe(0);
    expect(await gateOf(vars, key.id).activeLeases()).toBe(0);
  });

  it("the same against a real llama-server (which honours max_tokens): at most 400 tokens served", async () => {
    const vars = keyedVars();
    const key = await createKey(vars, { name: "day400-llama", scopes: ["chat"], limits: { tokensPerDay: 400 } });
    // Letters and spaces only: the random model's free text, now and then read by the server's chat
    // parser as a broken tool call (a 502 upstream_error, 1 run in 3 here), always reads as text.
    const grammar = "root ::= [a-z ]+";
    const results = await Promise.all(
      Array.from({ length: 8 }, () => send("/v1/chat/completions", { json: { model: "any", max_tokens: 100, messages, grammar }, headers: bearer(key.key) }, vars)),
    );
    const admitted = results.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(1);
    expect(admitted).toBeLessThanOrEqual(4);
    expect(results.filter((r) => r.status === 429).every((r) => r.body.error.code === "tokens_per_day_exceeded")).toBe(true);
    const u = await usageTotals(vars, key.key);
    console.log(`real llama-server, 400-token day, 8 at once with max_tokens 100: ${admitted} admitted, ${u.totals.prompt_tokens} + ${u.totals.completion_tokens} tokens served`);
    expect(u.totals.prompt_tokens + u.totals.completion_tokens).toBeLessThanOrEqual(400);
  });

  it("a burst on a 30-token day with max_tokens 2: exactly 2 admitted; once they are charged the next is refused until midnight", async () => {
    const vars = keyedVars(configWith({ fast: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hello` }] } }));
    const key = await createKey(vars, { name: "day30", scopes: ["chat"], limits: { tokensPerDay: 30 } });
    // Each reserves 11 (its prompt's 41 characters) + 2 × 2 (its max_tokens, and one more generation
    // should the server's chat parser refuse the answer) = 15 and is charged 3 + 5 = 8: two fit in
    // flight, and a third never does (8 + 8 + 15 > 30), whatever the interleaving.
    const results = await Promise.all(
      Array.from({ length: 4 }, () => send("/v1/chat/completions", { json: { model: "fast", max_tokens: 2, messages }, headers: bearer(key.key) }, vars)),
    );
    expect(results.filter((r) => r.status === 200).length).toBe(2);
    expect(results.filter((r) => r.status === 429 && r.body.error.code === "tokens_per_day_exceeded").length).toBe(2);
    const next = await send("/v1/chat/completions", { json: { model: "fast", max_tokens: 2, messages }, headers: bearer(key.key) }, vars);
    expect(next.status).toBe(429);
    expect(next.body.error.code).toBe("tokens_per_day_exceeded");
    expect(next.body.error.message).toContain("14 of its 30 tokens left");
    expect(Number(next.retryAfter)).toBeGreaterThan(1);
    // A request that fits what is left is still served.
    const small = await send("/v1/chat/completions", { json: { model: "fast", max_tokens: 1, messages }, headers: bearer(key.key) }, vars);
    expect(small.status).toBe(200);
  });

  it("a refusal of the key's day keeps its 429 however short the commit grace: the grace starts once the reservation is settled", async () => {
    // Before: a reservation slower than timeouts.commitMs (a Durable Object round trip under load)
    // committed a 200 first, and the refusal came as that 200's body.
    const vars = keyedVars(configWith({ fast: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hello` }] } }, { timeouts: { commitMs: 1 } }));
    const key = await createKey(vars, { name: "day20", scopes: ["chat"], limits: { tokensPerDay: 20 } });
    for (const stream of [false, true]) {
      const r = await send("/v1/chat/completions", { json: { model: "fast", max_tokens: 100, stream, messages }, headers: bearer(key.key) }, vars);
      expect(r.status, JSON.stringify(r.body)).toBe(429);
      expect(r.body.error.code).toBe("tokens_per_day_exceeded");
    }
    const fits = await send("/v1/chat/completions", { json: { model: "fast", max_tokens: 1, messages }, headers: bearer(key.key) }, vars);
    expect(fits.status).toBe(200);
  });

  it("without max_tokens the key's default bound is reserved and sent upstream (else the deployment's limits.defaultMaxTokens); a key without a day limit sends none", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const base = `${FIXTURE_URL}/u-cap-${tag}/behave/say/hello`;
    const vars = keyedVars(configWith({ m: { targets: [{ kind: "llama", url: base }] } }, { limits: { defaultMaxTokens: 30 } }));
    const own = await createKey(vars, { name: "own-cap", scopes: ["chat"], limits: { tokensPerDay: 10_000, defaultMaxTokens: 20 } });
    const deployment = await createKey(vars, { name: "deployment-cap", scopes: ["chat"], limits: { tokensPerDay: 10_000 } });
    const unlimited = await createKey(vars, { name: "no-day", scopes: ["chat"], limits: { concurrency: 2 } });
    // What the upstream received for one request, found by its x-request-id (Switchyard's, the response's too).
    const sentMaxTokens = async (key: string, path: string, json: Record<string, unknown>) => {
      const r = await send(path, { json, headers: bearer(key) }, vars);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const mine = (await received()).filter((q) => q.headers["x-request-id"] === r.requestId);
      expect(mine).toHaveLength(1);
      return JSON.parse(mine[0]!.body).max_tokens as number | undefined;
    };
    expect(await sentMaxTokens(own.key, "/v1/chat/completions", { model: "m", messages })).toBe(20);
    expect(await sentMaxTokens(own.key, "/v1/responses", { model: "m", input: "hi", store: false })).toBe(20);
    expect(await sentMaxTokens(own.key, "/v1/completions", { model: "m", prompt: "hi" })).toBe(20);
    expect(await sentMaxTokens(own.key, "/v1/chat/completions", { model: "m", max_tokens: 50, messages })).toBe(50);
    expect(await sentMaxTokens(deployment.key, "/v1/chat/completions", { model: "m", messages })).toBe(30);
    expect(await sentMaxTokens(unlimited.key, "/v1/chat/completions", { model: "m", messages })).toBeUndefined();
    // llama-server reads n_predict before max_tokens: "no limit" there is given the same bound.
    const sentBody = async (json: Record<string, unknown>) => {
      const r = await send("/v1/chat/completions", { json, headers: bearer(own.key) }, vars);
      expect(r.status).toBe(200);
      return JSON.parse((await received()).find((q) => q.headers["x-request-id"] === r.requestId)!.body);
    };
    expect(await sentBody({ model: "m", max_tokens: 50, n_predict: -1, messages })).toMatchObject({ max_tokens: 50, n_predict: 50 });
    expect(await sentBody({ model: "m", n_predict: -1, messages })).toMatchObject({ max_tokens: 20, n_predict: 20 });
    // The bound must fit the day: a day smaller than the default bound refuses, saying what to do.
    const tiny = await createKey(vars, { name: "tiny-day", scopes: ["chat"], limits: { tokensPerDay: 25 } });
    const refused = await send("/v1/chat/completions", { json: { model: "m", messages }, headers: bearer(tiny.key) }, vars);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("tokens_per_day_exceeded");
    expect(refused.body.error.message).toContain("Lower max_tokens");
  });

  it("against a real llama-server, the default bound is what the answer can use", async () => {
    const vars = keyedVars();
    const key = await createKey(vars, { name: "capped", scopes: ["chat"], limits: { tokensPerDay: 100_000, defaultMaxTokens: 7 } });
    const r = await send("/v1/chat/completions", { json: { model: "any", messages: [{ role: "user", content: "Write a long story." }] }, headers: bearer(key.key) }, vars);
    expect(r.status).toBe(200);
    expect(r.body.usage.completion_tokens).toBeLessThanOrEqual(7);
    expect(r.body.choices[0].finish_reason).toBe("length");
    // A small max_tokens beside llama-server's own "no limit" is not a way around the reservation.
    const sneaky = await send("/v1/chat/completions", { json: { model: "any", max_tokens: 5, n_predict: -1, messages: [{ role: "user", content: "Write a long story." }] }, headers: bearer(key.key) }, vars);
    expect(sneaky.status).toBe(200);
    expect(sneaky.body.usage.completion_tokens).toBeLessThanOrEqual(5);
  });

  it("a request that fails is charged what it used and its reservation is released at once", async () => {
    const vars = keyedVars(configWith({ broken: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/html-500` }] } }));
    const key = await createKey(vars, { name: "released", scopes: ["chat"], limits: { tokensPerDay: 200 } });
    const failed = await send("/v1/chat/completions", { json: { model: "broken", max_tokens: 90, messages }, headers: bearer(key.key) }, vars);
    expect(failed.status).toBe(502);
    expect(await gateOf(vars, key.id).reservedTokens()).toBe(0);
    expect(await gateOf(vars, key.id).activeLeases()).toBe(0);
    // 11 + 2 × 90 fits the day again: nothing was kept for the failed one.
    const again = await send("/v1/chat/completions", { json: { model: "broken", max_tokens: 90, messages }, headers: bearer(key.key) }, vars);
    expect(again.status).toBe(502);
    const u = await usageTotals(vars, key.key);
    expect(u.totals).toMatchObject({ requests: 2, prompt_tokens: 0, completion_tokens: 0, errors: 2 });
  });

  it("a reservation is a hold with a TTL: one left by a dead isolate stops counting after it; a refused reservation frees its slot", async () => {
    const gate = env.KEY_GATE.getByName(`reserve-test-${crypto.randomUUID()}`) as DurableObjectStub<KeyGate>;
    const limits = { tokensPerDay: 100, concurrency: 2 };
    const a = await gate.admit(limits, true);
    expect(a).toMatchObject({ ok: true });
    expect(await gate.reserve(a.ok ? a.leaseId : undefined, limits, 80)).toMatchObject({ ok: true });
    const b = await gate.admit(limits, true);
    expect(await gate.reserve(b.ok ? b.leaseId : undefined, limits, 30)).toMatchObject({ ok: false, code: "tokens_per_day_exceeded", retryAfter: 1 });
    expect(await gate.activeLeases()).toBe(1);
    // Nobody settles or renews the first: age it past its TTL.
    await runInDurableObject(gate, (_o, state) => void state.storage.sql.exec("UPDATE holds SET expires = ?", Date.now() - 1));
    expect(await gate.reserve(undefined, limits, 30)).toMatchObject({ ok: true });
    expect(await gate.reservedTokens()).toBe(30);
  });
});

describe("model names are at most 256 characters", () => {
  const tooLong = "m".repeat(257);
  const longest = "m".repeat(256);
  const isInvalidModel = (path: string, r: { status: number; body: any }) => {
    expect(r.status, `${path} ${JSON.stringify(r.body).slice(0, 300)}`).toBe(400);
    if (path.startsWith("/v1/messages")) expect(r.body.error.type, path).toBe("invalid_request_error");
    else expect(r.body.error, path).toMatchObject({ code: "invalid_value", param: "model" });
    expect(JSON.stringify(r.body), path).not.toContain(tooLong);
  };
  const routes: Array<[string, (model: string) => unknown]> = [...GENERATING, ["/v1/messages/count_tokens", (model) => ({ model, messages })]];

  for (const [mode, vars] of [
    ["zero config", () => ({ LLAMA_URL: `${FIXTURE_URL}/behave/say/hello` })],
    ["declared models", () => configWith({ [longest]: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hello` }] } })],
    ["a keyed deployment with an allow-list", () => keyedVars({ LLAMA_URL: `${FIXTURE_URL}/behave/say/hello` })],
  ] as const) {
    it(`${mode}: 257 characters → 400 invalid_value on every route that takes a model; 256 is accepted`, async () => {
      const v: Record<string, unknown> = vars();
      let headers: Record<string, string> = {};
      if (mode.includes("keyed")) headers = bearer((await createKey(v, { name: "listed", scopes: ["chat"], models: [longest], limits: { rpm: 1000 } })).key);
      for (const [path, body] of routes) isInvalidModel(path, await send(path, { json: body(tooLong), headers }, v));
      isInvalidModel("/v1/models/{id}", await send(`/v1/models/${tooLong}`, { headers }, v));
      const chat = await send("/v1/chat/completions", { json: { model: longest, messages }, headers }, v);
      expect(chat.status, JSON.stringify(chat.body)).toBe(200);
      expect(chat.body.model).toBe(longest);
      for (const [path, body] of routes) expect((await send(path, { json: body(longest), headers }, v)).status, path).not.toBe(400);
      expect((await send(`/v1/models/${longest}`, { headers }, v)).status).toBe(200);
    });
  }

  it("a declared model name over 256 characters is a configuration error", async () => {
    const r = await send("/v1/chat/completions", { json: { model: "m", messages } }, configWith({ [tooLong]: { targets: [{ kind: "llama", url: LLAMA_URL }] } }));
    expect(r.status).toBe(500);
    expect(r.body.error.code).toBe("config_error");
  });
});

describe("usage rows are always written", () => {
  it("a request with a 256-character model name is charged under that name", async () => {
    const name = "x".repeat(256);
    const vars = keyedVars({ LLAMA_URL: `${FIXTURE_URL}/behave/say/hello` });
    const key = await createKey(vars, { name: "long-name", scopes: ["chat"] });
    expect((await send("/v1/chat/completions", { json: { model: name, messages }, headers: bearer(key.key) }, vars)).status).toBe(200);
    const u = await usageTotals(vars, key.key);
    expect(u.usage).toEqual([expect.objectContaining({ model: name, requests: 1, prompt_tokens: 3, completion_tokens: 5 })]);
  });

  it("the KeyGate charges a report whatever its model's size: a 3 MB name gets a row key of at most 256 characters (Cloudflare refuses strings over 2 MB)", async () => {
    const gate = env.KEY_GATE.getByName(`settle-test-${crypto.randomUUID()}`) as DurableObjectStub<KeyGate>;
    const huge = "q".repeat(3 * 1024 * 1024);
    await gate.settle({ model: huge, backend: `browser:${huge}`, promptTokens: 10, completionTokens: 20, error: false });
    await gate.settle({ model: huge, backend: `browser:${huge}`, promptTokens: 1, completionTokens: 2, error: false });
    const rows = await gate.usage();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.model.length).toBeLessThanOrEqual(256);
    expect(rows[0]!.backend.length).toBeLessThanOrEqual(256);
    expect(rows[0]).toMatchObject({ requests: 2, promptTokens: 11, completionTokens: 22 });
    // Charged: a day limit sees it.
    expect(await gate.admit({ tokensPerDay: 33 }, false)).toMatchObject({ ok: false, code: "tokens_per_day_exceeded" });
  });

  it("the KeyGate charges a report with a count that is not a number: that count is 0, the rest lands", async () => {
    const gate = env.KEY_GATE.getByName(`settle-nan-${crypto.randomUUID()}`) as DurableObjectStub<KeyGate>;
    await gate.settle({ model: "m", backend: "llama:x", promptTokens: Number.NaN, completionTokens: 4, error: true });
    expect(await gate.usage()).toEqual([expect.objectContaining({ model: "m", requests: 1, promptTokens: 0, completionTokens: 4, errors: 1 })]);
  });
});
