import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KeyGate } from "../../src/auth/key-gate.ts";
import { call, configWith, createKey, FIXTURE_URL, keyedVars, readSse } from "./harness.ts";

// Limits under concurrent bursts (what slipped past must be zero), tokens from real usage,
// brute-force-looking traffic, usage per key/model/backend, and no secret in any body or log line.

const models = configWith({
  fast: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/say/hello` }] },
  slow: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/paced/15` }] },
  broken: { targets: [{ kind: "llama", url: `${FIXTURE_URL}/behave/reset-mid` }] },
});
const chat = (model: string, stream = false) => ({ model, stream, messages: [{ role: "user", content: "hello there" }] });
const bearer = (key: string, ip = "203.0.113.1") => ({ authorization: `Bearer ${key}`, "cf-connecting-ip": ip });

// Everything the tests saw, searched for secrets at the end.
const bodies: string[] = [];
const logs: string[] = [];
const secrets: string[] = [];
const original = { log: console.log, error: console.error, warn: console.warn, info: console.info };
beforeAll(() => {
  for (const level of ["log", "error", "warn", "info"] as const) {
    console[level] = (...args: unknown[]) => {
      logs.push(args.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : typeof a === "string" ? a : JSON.stringify(a))).join(" "));
      original[level](...args);
    };
  }
});
afterAll(() => Object.assign(console, original));

async function keep(res: Response): Promise<string> {
  const text = await res.text();
  bodies.push(text, JSON.stringify([...res.headers]));
  return text;
}

async function burst(n: number, send: (i: number) => Promise<{ res: Response; done: () => Promise<void> }>) {
  const results = await Promise.all(Array.from({ length: n }, (_, i) => send(i)));
  const statuses = await Promise.all(
    results.map(async ({ res, done }) => {
      await keep(res);
      await done();
      return { status: res.status, retryAfter: res.headers.get("retry-after") };
    }),
  );
  return statuses;
}

describe("limits under a concurrent burst", () => {
  it("rpm: exactly the limit gets through, the rest 429 rate_limit_exceeded with Retry-After", async () => {
    const vars = keyedVars(models);
    const key = await createKey(vars, { name: "rpm", scopes: ["chat"], limits: { rpm: 7 } });
    secrets.push(key.key, vars.ADMIN_TOKEN);
    const results = await burst(60, () => call("/v1/chat/completions", { json: chat("fast"), headers: bearer(key.key) }, vars));
    const ok = results.filter((r) => r.status === 200).length;
    const limited = results.filter((r) => r.status === 429);
    expect(ok).toBe(7);
    expect(limited.length).toBe(53);
    expect(limited.every((r) => Number(r.retryAfter) >= 1 && Number(r.retryAfter) <= 60)).toBe(true);
    const again = await call("/v1/models", { headers: bearer(key.key) }, vars);
    expect(again.res.status).toBe(429);
    expect((await again.res.json<any>()).error.code).toBe("rate_limit_exceeded");
  });

  it("concurrent streams: at most the limit run at once; slots free when streams end or are aborted", async () => {
    const vars = keyedVars(models);
    const key = await createKey(vars, { name: "conc", scopes: ["chat"], limits: { concurrency: 3 } });
    secrets.push(key.key, vars.ADMIN_TOKEN);
    const results = await burst(30, () => call("/v1/chat/completions", { json: chat("slow", true), headers: bearer(key.key) }, vars));
    expect(results.filter((r) => r.status === 200).length).toBe(3);
    expect(results.filter((r) => r.status === 429).length).toBe(27);
    // All ended: every slot is free again.
    const gate = env.KEY_GATE.getByName(`${vars.KEY_STORE_NAME}:${key.id}`);
    expect(await gate.activeLeases()).toBe(0);
    // A client that leaves mid-stream frees its slot too.
    const { res, done } = await call("/v1/chat/completions", { json: chat("slow", true), headers: bearer(key.key) }, vars);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    expect(await gate.activeLeases()).toBe(1);
    await reader.cancel();
    await done();
    expect(await gate.activeLeases()).toBe(0);
  });

  it("a slot is a lease: one left by a dead isolate expires after its TTL", async () => {
    const gate = env.KEY_GATE.getByName(`lease-test-${crypto.randomUUID()}`) as DurableObjectStub<KeyGate>;
    expect(await gate.admit({ concurrency: 1 }, true)).toMatchObject({ ok: true });
    expect(await gate.admit({ concurrency: 1 }, true)).toMatchObject({ ok: false, code: "concurrency_limit_exceeded" });
    // Nobody releases or renews it; age it past its TTL.
    await runInDurableObject(gate, (_o, state) => void state.storage.sql.exec("UPDATE holds SET expires = ?", Date.now() - 1));
    expect(await gate.admit({ concurrency: 1 }, true)).toMatchObject({ ok: true });
  });

  it("tokens per day: counted from real usage (stream, non-stream, failed), enforced at the next request, for a whole burst", async () => {
    const vars = keyedVars(models);
    // Each request reserves its prompt (11) and twice its max_tokens (the key's default, 1) until it is charged.
    const key = await createKey(vars, { name: "tokens", scopes: ["chat"], limits: { tokensPerDay: 40, defaultMaxTokens: 1 } });
    secrets.push(key.key, vars.ADMIN_TOKEN);
    // say/hello reports 3 prompt + 5 completion tokens; paced/15 reports 3 + 15.
    const a = await call("/v1/chat/completions", { json: chat("fast"), headers: bearer(key.key) }, vars);
    await keep(a.res);
    await a.done();
    const b = await call("/v1/chat/completions", { json: chat("slow", true), headers: bearer(key.key) }, vars);
    await keep(b.res);
    await b.done();
    // A stream that fails mid-way (connection reset after two tokens) is charged what it produced.
    const c = await call("/v1/chat/completions", { json: chat("broken", true), headers: bearer(key.key) }, vars);
    await keep(c.res);
    await c.done();
    const usage = await call("/v1/usage", { headers: bearer(key.key) }, vars);
    const u = JSON.parse(await keep(usage.res));
    expect(u.totals.requests).toBe(3);
    expect(u.totals.prompt_tokens).toBeGreaterThanOrEqual(6 + 1);
    expect(u.totals.completion_tokens).toBeGreaterThan(20);
    const broken = u.usage.find((r: any) => r.model === "broken");
    expect(broken.errors).toBe(1);
    expect(broken.completion_tokens).toBeGreaterThan(0);
    const spent = u.totals.prompt_tokens + u.totals.completion_tokens;
    expect(spent).toBeGreaterThanOrEqual(30);
    const results = await burst(40, () => call("/v1/chat/completions", { json: chat("fast"), headers: bearer(key.key) }, vars));
    expect(results.filter((r) => r.status !== 429).length).toBe(0);
  });

  it("a burst within tokens per day is let in as far as its reservations fit, and charged: the next request is refused", async () => {
    const vars = keyedVars(models);
    const key = await createKey(vars, { name: "t2", scopes: ["chat"], limits: { tokensPerDay: 30, defaultMaxTokens: 2 } });
    secrets.push(key.key);
    // Each reserves 11 + 2 × 2 = 15 at admission (its max_tokens twice: a llama-server's chat parser
    // may refuse the answer, and one more generation may follow) and is charged 8: whatever the interleaving, two fit
    // (15 + 15 in flight), and a third never does (8 + 8 charged + 15 > 30).
    const first = await burst(4, () => call("/v1/chat/completions", { json: chat("fast"), headers: bearer(key.key) }, vars));
    expect(first.filter((r) => r.status === 200).length).toBe(2);
    const next = await call("/v1/chat/completions", { json: chat("fast"), headers: bearer(key.key) }, vars);
    expect(next.res.status).toBe(429);
    expect(JSON.parse(await keep(next.res)).error.code).toBe("tokens_per_day_exceeded");
  });
});

describe("usage", () => {
  it("per key, per model and per backend; the admin sees every key", async () => {
    const vars = keyedVars(models);
    const alice = await createKey(vars, { name: "alice", scopes: ["chat"] });
    const bob = await createKey(vars, { name: "bob", scopes: ["chat"] });
    secrets.push(alice.key, bob.key, vars.ADMIN_TOKEN);
    for (const [key, model, stream] of [[alice.key, "fast", false], [alice.key, "slow", true], [bob.key, "fast", true]] as const) {
      const r = await call("/v1/chat/completions", { json: chat(model, stream), headers: bearer(key) }, vars);
      await keep(r.res);
      await r.done();
    }
    const bad = await call("/v1/chat/completions", { json: { model: "fast" }, headers: bearer(alice.key) }, vars);
    expect(bad.res.status).toBe(400);
    await bad.done();
    const own = JSON.parse(await keep((await call("/v1/usage", { headers: bearer(alice.key) }, vars)).res));
    expect(own.key.name).toBe("alice");
    expect(own.totals).toMatchObject({ requests: 3, prompt_tokens: 6, completion_tokens: 20, errors: 1 });
    const fast = own.usage.find((r: any) => r.model === "fast" && r.requests === 1 && r.errors === 0);
    expect(fast.backend).toMatch(/^llama:/);
    const all = await call("/v1/admin/usage", { headers: { authorization: `Bearer ${vars.ADMIN_TOKEN}` } }, vars);
    const view = JSON.parse(await keep(all.res));
    expect(view.data.map((d: any) => [d.key.name, d.totals.requests])).toEqual([
      ["alice", 3],
      ["bob", 1],
    ]);
  });
});

describe("brute-force-looking traffic", () => {
  it("more than 20 failed authentications a minute from one address → 429, even for a right key, and locally from an invented address too", async () => {
    const vars = keyedVars(models);
    const key = await createKey(vars, { name: "real", scopes: ["chat"] });
    secrets.push(key.key);
    const attacker = "198.51.100.200";
    const results = await burst(50, (i) => call("/v1/models", { headers: bearer(`sy-guess${i}${"x".repeat(37)}`, attacker) }, vars));
    const unauthorized = results.filter((r) => r.status === 401).length;
    const blocked = results.filter((r) => r.status === 429).length;
    expect(unauthorized).toBeLessThanOrEqual(20);
    expect(unauthorized + blocked).toBe(50);
    const right = await call("/v1/models", { headers: bearer(key.key, attacker) }, vars);
    expect(right.res.status).toBe(429);
    expect(Number(right.res.headers.get("retry-after"))).toBeGreaterThan(0);
    const admin = await call("/v1/admin/keys", { headers: bearer("wrong-admin", attacker) }, vars);
    expect(admin.res.status).toBe(429);
    // This deployment runs in dev, where a client can send any CF-Connecting-IP: every local client
    // shares one bucket, so an invented address is blocked too. Deployed, where Cloudflare's edge sets
    // the header, other addresses are unaffected (test/workerd/hardening-address.test.ts).
    const elsewhere = await call("/v1/models", { headers: bearer(key.key, "198.51.100.201") }, vars);
    expect(elsewhere.res.status).toBe(429);
  });
});

describe("secrets", () => {
  it("no key, admin token or Authorization value appears in any response body, header or log line", () => {
    expect(secrets.length).toBeGreaterThan(5);
    const haystack = [...bodies, ...logs].join("\n");
    for (const s of secrets) expect(haystack.includes(s), `a secret leaked`).toBe(false);
  });
});
