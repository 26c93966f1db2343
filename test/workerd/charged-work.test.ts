// What runs upstream is what was admitted and charged (issue 40, findings 4 and 5): llama-server's own
// work multipliers (n_cmpl, n_probs, id_slot, …) are refused or bounded on every door before any
// upstream is asked, and embeddings reserve their input from the key's day before they run.
import { describe, expect, it } from "vitest";
import { call, configWith, createKey, FIXTURE_URL, grammar, keyedVars, received } from "./harness.ts";

const bearer = (key: string) => ({ authorization: `Bearer ${key}`, "cf-connecting-ip": "203.0.113.7" });
const messages = [{ role: "user", content: "hello there" }];

async function send(path: string, json: unknown, vars: Record<string, unknown>, key: string) {
  const { res, done } = await call(path, { json, headers: bearer(key) }, vars);
  const text = await res.text();
  await done();
  return { status: res.status, body: text ? (JSON.parse(text) as any) : null };
}

async function usageTotals(vars: Record<string, unknown>, key: string) {
  const { res, done } = await call("/v1/usage", { headers: bearer(key) }, vars);
  const body = await res.json<any>();
  await done();
  return body.totals as { requests: number; prompt_tokens: number; completion_tokens: number };
}

/** Every door that generates, with `extra` fields: each forwards its unknown fields to llama-server. */
const DOORS: Array<[string, (extra: Record<string, unknown>) => unknown]> = [
  ["/v1/chat/completions", (extra) => ({ model: "any", messages, max_tokens: 80, ...extra })],
  ["/v1/completions", (extra) => ({ model: "any", prompt: "hello there", max_tokens: 80, ...extra })],
  ["/v1/responses", (extra) => ({ model: "any", input: "hello there", max_output_tokens: 80, store: false, ...extra })],
  ["/v1/messages", (extra) => ({ model: "any", messages, max_tokens: 80, ...extra })],
];

describe("llama-server's work multipliers are Switchyard's", () => {
  it("n_cmpl: 4 with max_tokens 80 (320 tokens on 4 slots, charged 80) is a 400 naming n_cmpl on every door, and nothing is charged", async () => {
    // The real llama-server of the harness (4 slots): today's code ran the 4 completions.
    const vars = keyedVars();
    const key = await createKey(vars, { name: "n-cmpl", scopes: ["chat"], limits: { tokensPerDay: 400 } });
    for (const [path, body] of DOORS) {
      const r = await send(path, body({ n_cmpl: 4 }), vars, key.key);
      expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(400);
      if (path === "/v1/messages") expect(r.body.error).toMatchObject({ type: "invalid_request_error", message: expect.stringContaining("n_cmpl") });
      else expect(r.body.error).toMatchObject({ code: "unsupported_parameter", param: "n_cmpl" });
    }
    for (const [field, value, code] of [["id_slot", 2, "unsupported_parameter"], ["n_probs", 100_000, "invalid_value"], ["lora", [{ id: 0, scale: 1 }], "unsupported_parameter"]] as const) {
      const r = await send("/v1/chat/completions", DOORS[0]![1]({ [field]: value }), vars, key.key);
      expect(r.status, field).toBe(400);
      expect(r.body.error).toMatchObject({ code, param: field });
    }
    const u = await usageTotals(vars, key.key);
    expect(u.prompt_tokens + u.completion_tokens).toBe(0);
  });

  it("n_cmpl: 1 runs, and the client's usage is what the key was charged", async () => {
    const vars = keyedVars();
    const key = await createKey(vars, { name: "n-cmpl-1", scopes: ["chat"], limits: { tokensPerDay: 10_000 } });
    // A literal grammar: unconstrained, the random-weight model now and then writes text its server's
    // chat parser refuses, and the generation that replaces it is charged on top (auth/meter.ts), which
    // is right but not what this test is about.
    const r = await send("/v1/chat/completions", DOORS[0]![1]({ n_cmpl: 1, max_tokens: 8, grammar: grammar("one two three") }), vars, key.key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices).toHaveLength(1);
    const u = await usageTotals(vars, key.key);
    expect(u.completion_tokens).toBe(r.body.usage.completion_tokens);
    expect(u.prompt_tokens).toBe(r.body.usage.prompt_tokens);
  });
});

describe("embeddings reserve their input before they run (issue 40, finding 5)", () => {
  const embedVars = () => keyedVars(configWith({ e: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/embed` }] } }));

  it("a 1,000-token day, three ~1 MB inputs at once: all 429 tokens_per_day_exceeded, none reaches the upstream, nothing is charged", async () => {
    const tag = `emb-${crypto.randomUUID()}`;
    const vars = embedVars();
    const key = await createKey(vars, { name: "day1000", scopes: ["chat"], limits: { tokensPerDay: 1000 } });
    const input = `${tag} ${"lorem ipsum ".repeat(85_000)}`; // ~1 MB: ~255,000 tokens estimated
    const results = await Promise.all(Array.from({ length: 3 }, () => send("/v1/embeddings", { model: "e", input }, vars, key.key)));
    for (const r of results) {
      expect(r.status).toBe(429);
      expect(r.body.error.code).toBe("tokens_per_day_exceeded");
    }
    expect((await received()).filter((q) => q.body.includes(tag))).toHaveLength(0);
    const u = await usageTotals(vars, key.key);
    expect(u.prompt_tokens).toBe(0);
  });

  it("what fits runs and is charged the upstream's count, not the estimate; more than 2,048 inputs is a 400", async () => {
    const vars = embedVars();
    const key = await createKey(vars, { name: "day40", scopes: ["chat"], limits: { tokensPerDay: 40 } });
    // 100 characters: 25 tokens reserved; the fixture counts 2 a input.
    const ok = await send("/v1/embeddings", { model: "e", input: "a".repeat(100) }, vars, key.key);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((await usageTotals(vars, key.key)).prompt_tokens).toBe(2);
    // 38 left: 160 characters (40 tokens estimated) does not fit.
    const over = await send("/v1/embeddings", { model: "e", input: "a".repeat(160) }, vars, key.key);
    expect(over.status).toBe(429);
    expect(over.body.error.message).toContain("38 of its 40 tokens left");
    const many = await send("/v1/embeddings", { model: "e", input: Array(2049).fill("a") }, vars, key.key);
    expect(many.status).toBe(400);
    expect(many.body.error).toMatchObject({ code: "invalid_value", param: "input" });
  });
});
