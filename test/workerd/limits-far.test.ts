// A key whose day is far from its tokensPerDay (issue 47): its admission reserves tokens in advance
// on its hold (advanceReservation), so a request whose estimate fits makes one KeyGate call, not two.
// The day still holds exactly (the advance is counted on the KeyGate like any reservation), near the
// limit every reservation is the request's own again, and revocation stays immediate (every request
// is still admitted by its KeyGate, which refuses a revoked key).
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { KeyGate } from "../../src/auth/key-gate.ts";
import { dayOf, FAR_HEADROOM, FAR_SHARE } from "../../src/auth/limit-math.ts";
import { call, configWith, createKey, FIXTURE_URL, keyedVars } from "./harness.ts";

const bearer = (key: string) => ({ authorization: `Bearer ${key}`, "cf-connecting-ip": "203.0.113.9" });
const messages = [{ role: "user", content: "hello there" }];
const gateOf = (vars: Record<string, unknown>, id: string) => env.KEY_GATE.getByName(`${vars.KEY_STORE_NAME}:${id}`) as DurableObjectStub<KeyGate>;

async function send(init: RequestInit & { json?: unknown }, vars: Record<string, unknown>) {
  const { res, done } = await call("/v1/chat/completions", init, vars);
  const text = await res.text();
  await done();
  return { status: res.status, body: text ? (JSON.parse(text) as any) : null };
}

/** Today's usage on `gate` set to `tokens` charged (as if earlier requests had used them). */
const chargeToday = (gate: DurableObjectStub<KeyGate>, tokens: number) =>
  runInDurableObject(gate, (_o, state) => void state.storage.sql.exec("INSERT INTO usage (day, model, backend, requests, prompt, completion, errors) VALUES (?, 'm', 'b', 1, ?, 0, 0)", dayOf(Date.now()), tokens));

const config = () =>
  configWith(
    {
      slow: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/paced/100` }] },
      fast: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hello` }] },
    },
    { observability: { log: false } },
  );

describe("a day far from its limit is reserved at admission", () => {
  it("the running request's hold holds the advance (no reserve call replaced it), and it settles at what was used", async () => {
    const vars = keyedVars(config());
    const limit = 100_000_000;
    const key = await createKey(vars, { name: "far", scopes: ["chat"], limits: { tokensPerDay: limit, concurrency: 4 } });
    const gate = gateOf(vars, key.id);
    const stream = await call("/v1/chat/completions", { json: { model: "slow", stream: true, max_tokens: 100, messages }, headers: bearer(key.key) }, vars);
    expect(stream.res.status).toBe(200);
    const reader = stream.res.body!.getReader();
    await reader.read();
    // A reserve() call would have replaced it with the request's estimate (11 + 2 × 100).
    expect(await gate.reservedTokens()).toBe(Math.floor(limit / FAR_SHARE));
    expect(await gate.activeLeases()).toBe(1);
    while (!(await reader.read()).done);
    await stream.done();
    expect(await gate.reservedTokens()).toBe(0);
    expect(await gate.activeLeases()).toBe(0);
    const usage = await gate.usage();
    expect(usage.reduce((s, r) => s + r.promptTokens + r.completionTokens, 0)).toBe(103);
  });

  it("near the limit the reservation is the request's own estimate again, and the day is never overrun", async () => {
    const vars = keyedVars(config());
    const limit = 2 * FAR_HEADROOM;
    const key = await createKey(vars, { name: "near", scopes: ["chat"], limits: { tokensPerDay: limit } });
    const gate = gateOf(vars, key.id);
    // Exactly FAR_HEADROOM left: the first admission is still far, the second is not.
    await chargeToday(gate, limit - FAR_HEADROOM);
    const first = await call("/v1/chat/completions", { json: { model: "slow", stream: true, max_tokens: 100, messages }, headers: bearer(key.key) }, vars);
    const firstReader = first.res.body!.getReader();
    await firstReader.read();
    const advance = Math.floor(FAR_HEADROOM / FAR_SHARE);
    expect(await gate.reservedTokens()).toBe(advance);
    const second = await call("/v1/chat/completions", { json: { model: "slow", stream: true, max_tokens: 100, messages }, headers: bearer(key.key) }, vars);
    const secondReader = second.res.body!.getReader();
    await secondReader.read();
    // The second reserved its own estimate: its prompt (a few tokens) and twice its max_tokens.
    const both = await gate.reservedTokens();
    expect(both).toBeGreaterThan(advance + 200);
    expect(both).toBeLessThan(advance + 300);
    for (const [r, s] of [[firstReader, first], [secondReader, second]] as const) {
      while (!(await r.read()).done);
      await s.done();
    }
    expect(await gate.reservedTokens()).toBe(0);
  });

  it("a request larger than the advance reserves its own estimate on the same hold", async () => {
    const vars = keyedVars(config());
    const limit = 64 * FAR_HEADROOM;
    const key = await createKey(vars, { name: "big", scopes: ["chat"], limits: { tokensPerDay: limit } });
    const gate = gateOf(vars, key.id);
    // Leave just FAR_HEADROOM: the advance is FAR_HEADROOM / 64 = 15,625 tokens, and this asks for 2 × 20,000.
    await chargeToday(gate, limit - FAR_HEADROOM);
    const r = await call("/v1/chat/completions", { json: { model: "slow", stream: true, max_tokens: 20_000, messages }, headers: bearer(key.key) }, vars);
    expect(r.res.status).toBe(200);
    const reader = r.res.body!.getReader();
    await reader.read();
    expect(await gate.reservedTokens()).toBeGreaterThan(40_000);
    expect(await gate.activeLeases()).toBe(1);
    await reader.cancel();
    await r.done();
  });
});

describe("revocation stays immediate for a key far from its day", () => {
  it("revoked on its KeyGate alone (as another isolate's revocation reaches this one): the next request is 401", async () => {
    const vars = keyedVars(config());
    const key = await createKey(vars, { name: "revoked-far", scopes: ["chat"], limits: { tokensPerDay: 100_000_000 } });
    expect((await send({ json: { model: "fast", max_tokens: 2, messages }, headers: bearer(key.key) }, vars)).status).toBe(200);
    // This isolate's key cache still holds the key as valid: only the KeyGate knows.
    await gateOf(vars, key.id).revoke();
    const after = await send({ json: { model: "fast", max_tokens: 2, messages }, headers: bearer(key.key) }, vars);
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe("invalid_api_key");
  });
});
