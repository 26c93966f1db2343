import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { resetHealthCache } from "../../src/health/health-client.ts";
import { FAST, LLAMA_URL, chat, fixture, fixtureLog, llama, outcome, sleep, vars } from "./fault-harness.ts";
import { call, createKey, keyedVars } from "../workerd/harness.ts";
import { targetName } from "../../src/routing/target.ts";

const hub = () => (env as unknown as Env).HEALTH_HUB.getByName("health");
const upstreamOf = async (url: string) => (await hub().status()).upstreams.find((u) => u.url === url.replace(/\/+$/, ""));
const say = (text: string) => llama(fixture(`behave/say/${encodeURIComponent(text)}`));

async function waitFor<T>(fn: () => Promise<T | undefined | false>, ms = 4000): Promise<T | undefined> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const v = await fn();
    if (v) return v;
    await sleep(100);
  }
  return undefined;
}

describe("circuit breaker", () => {
  it("opens after failureThreshold consecutive failures: the upstream is then tried last", async () => {
    const bad = llama(fixture("behave/loading"));
    const good = say("served");
    const cfg = vars([bad, good], { circuit: { failureThreshold: 2, cooldownMs: 30_000 } });
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { res, started } = await chat({ stream: false, vars: cfg });
      const got = await outcome(res, started);
      expect(got.text).toBe("served");
      seen.push(got.attempts!);
    }
    expect(seen).toEqual(["2", "2", "1"]);
    const u = await waitFor(() => upstreamOf(bad.url));
    expect(u?.circuit).toBe("open");
  });

  it("honours an upstream's Retry-After as a cooldown: the next request skips it", async () => {
    const limited = llama(fixture("behave/rate-limited/30"));
    const cfg = vars([limited, say("elsewhere")]);
    const first = await outcome(...Object.values(await chat({ stream: true, vars: cfg })) as [Response, number]);
    expect(first.attempts).toBe("2");
    const second = await outcome(...Object.values(await chat({ stream: true, vars: cfg })) as [Response, number]);
    expect(second.attempts).toBe("1");
    expect(second.text).toBe("elsewhere");
  });

  it("half-open: after the cooldown a healthy /health probe lets traffic try again, and a success closes it", async () => {
    const flaky = llama(fixture("behave/flaky-500/2"));
    const cfg = vars([flaky], { circuit: { failureThreshold: 2, cooldownMs: 300 }, retries: { perTarget: 1 }, health: { sampleMs: 200, snapshotTtlMs: 0 } });
    for (let i = 0; i < 2; i++) {
      const { res, started } = await chat({ stream: false, vars: cfg });
      expect((await outcome(res, started)).status).toBe(502);
    }
    expect((await waitFor(async () => (await upstreamOf(flaky.url))?.circuit === "open" && "open", 1000)) ?? (await upstreamOf(flaky.url))?.circuit).toMatch(/open/);
    expect(await waitFor(async () => (await upstreamOf(flaky.url))?.circuit === "half-open")).toBe(true);
    const { res, started } = await chat({ stream: false, vars: cfg });
    const got = await outcome(res, started);
    expect(got.text).toBe("recovered");
    expect(await waitFor(async () => (await upstreamOf(flaky.url))?.circuit === "closed")).toBe(true);
  });
});

describe("health hub", () => {
  it("samples /health and /slots of the upstreams in use, from its alarm", async () => {
    const ready = say("sampled");
    const loading = llama(fixture("behave/loading"));
    const cfg = vars([ready, loading], { health: { sampleMs: 200 } });
    const { res } = await chat({ stream: false, vars: cfg });
    await res.text();
    const r = await waitFor(async () => {
      const u = await upstreamOf(ready.url);
      return u?.health.state === "ready" && u;
    });
    expect(r?.health).toMatchObject({ state: "ready", slotsTotal: 1, slotsBusy: 0 });
    const l = await waitFor(async () => {
      const u = await upstreamOf(loading.url);
      return u?.health.state === "loading" && u;
    });
    expect(l?.health.state).toBe("loading");
  });

  it("with /slots off (--no-slots), the slot count comes from /props total_slots", async () => {
    const target = llama(fixture("slots-3/no-slots/behave/say/counted"));
    const { res } = await chat({ stream: false, vars: vars([target], { health: { sampleMs: 200 } }) });
    await res.text();
    const u = await waitFor(async () => {
      const h = await upstreamOf(target.url);
      return h?.health.state === "ready" && h;
    });
    expect(u?.health).toMatchObject({ state: "ready", slotsTotal: 3 });
  });

  it("a request never waits on the hub: the first one in an isolate is answered from config order", async () => {
    const { res, started } = await chat({ stream: false, vars: vars([say("no wait")]) });
    const got = await outcome(res, started);
    expect(got.text).toBe("no wait");
    expect(got.elapsed).toBeLessThan(1000);
  });
});

describe("operator view", () => {
  const get = async (path: string, vars: Record<string, unknown>, token?: string) => {
    const ctx = createExecutionContext();
    const headers = new Headers(token ? { authorization: `Bearer ${token}` } : {});
    return createApp().fetch(new Request(`http://switchyard.test${path}`, { headers }), { ...env, ...vars }, ctx);
  };

  it("/metrics without ADMIN_TOKEN (and no admin key) → 403 naming `wrangler secret put ADMIN_TOKEN`", async () => {
    const res = await get("/metrics", { ADMIN_TOKEN: "" });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).error.message).toContain("wrangler secret put ADMIN_TOKEN");
  });

  it("/metrics with the token: Prometheus text with requests, errors, tokens, latencies, circuits, sessions", async () => {
    const target = say("counted");
    const { res: r } = await chat({ stream: true, vars: vars([target]), body: { stream_options: { include_usage: true } } });
    await r.text();
    // Outcomes reach the hub batched, within health.snapshotTtlMs (1 s).
    const text = await waitFor(async () => {
      const res = await get("/metrics", { ADMIN_TOKEN: "admin-for-tests" }, "admin-for-tests");
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/plain");
      const body = await res.text();
      return /switchyard_tokens_total\{target="llama:127\.0\.0\.1:\d+",kind="completion"\} [1-9]/.test(body) && body;
    });
    if (!text) throw new Error("no completion tokens counted in /metrics within 4 s");
    for (const family of ["switchyard_requests_total", "switchyard_errors_total", "switchyard_tokens_total", "switchyard_first_event_seconds_bucket", "switchyard_request_seconds_count", "switchyard_upstream_circuit_state", "switchyard_browser_sessions"]) {
      expect(text).toContain(family);
    }
    expect(text).toMatch(/switchyard_requests_total\{target="llama:127\.0\.0\.1:\d+",code="ok"\} \d+/);
    expect(text).toMatch(/switchyard_tokens_total\{target="llama:127\.0\.0\.1:\d+",kind="completion"\} [1-9]/);
  });

  it("/v1/admin/status for the status page; 401 with a wrong token", async () => {
    expect((await get("/v1/admin/status", { ADMIN_TOKEN: "admin-for-tests" }, "wrong")).status).toBe(401);
    const res = await get("/v1/admin/status", { ADMIN_TOKEN: "admin-for-tests" }, "admin-for-tests");
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(Array.isArray(body.upstreams) && Array.isArray(body.sessions) && Array.isArray(body.targets)).toBe(true);
  });
});

describe("health reports are batched", () => {
  /** A HEALTH_HUB namespace that records what reaches the hub (and forwards nothing). */
  function recordingHub() {
    const reports: any[] = [];
    const stub = { observe: async (r: any) => void reports.push(r), snapshot: async () => ({ at: Date.now(), upstreams: {} }) };
    return { reports, HEALTH_HUB: { getByName: () => stub, idFromName: () => ({}), get: () => stub } };
  }

  it("successful requests reach the hub as one report per snapshotTtlMs, not one call per request", async () => {
    resetHealthCache();
    const { reports, HEALTH_HUB } = recordingHub();
    const cfg = { ...vars([say("batched")], { health: { snapshotTtlMs: 400 } }), HEALTH_HUB };
    for (let i = 0; i < 6; i++) {
      const { res, started } = await chat({ stream: i % 2 === 0, vars: cfg });
      expect((await outcome(res, started)).text).toBe("batched");
    }
    expect(reports).toHaveLength(0);
    await waitFor(async () => reports.length > 0, 2000);
    expect(reports).toHaveLength(1);
    expect(reports[0].outcomes).toHaveLength(6);
    expect(reports[0].attempts.filter((a: any) => a.ok)).toHaveLength(6);
    expect(reports[0].upstreams).toHaveLength(1);
  });

  it("a failed attempt is sent at once, with what was waiting", async () => {
    resetHealthCache();
    const { reports, HEALTH_HUB } = recordingHub();
    const good = say("fine");
    await outcome(...(Object.values(await chat({ stream: false, vars: { ...vars([good], { health: { snapshotTtlMs: 5000 } }), HEALTH_HUB } })) as [Response, number]));
    expect(reports).toHaveLength(0);
    const dead = llama("http://127.0.0.1:9/v1");
    const cfg = { ...vars([dead, good], { health: { snapshotTtlMs: 5000 } }), HEALTH_HUB };
    const got = await outcome(...(Object.values(await chat({ stream: false, vars: cfg })) as [Response, number]));
    expect(got.text).toBe("fine");
    await waitFor(async () => reports.length > 0, 1000);
    expect(reports).toHaveLength(1);
    expect(reports[0].outcomes).toHaveLength(2);
    expect(reports[0].attempts.some((a: any) => !a.ok && a.url.includes(":9/"))).toBe(true);
  });
});

// Issue 26, finding 6: the breaker counts only what the upstream did. One key's long answers cut by
// the request's own totalMs, its clients leaving, or its requests the server cannot take must not
// move every other key's traffic off a healthy server. Two targets: the fixture first, the real
// llama-server second (their names differ, so `x-switchyard-target` tells which served).
describe("what counts against an upstream (one key cannot open a healthy server's circuit)", () => {
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const ask = (cfg: Record<string, unknown>, key: string, body: Record<string, unknown>) => call("/v1/chat/completions", { json: { model: "m", messages: [{ role: "user", content: "hi" }], ...body }, headers: bearer(key) }, cfg);
  async function setup(first: ReturnType<typeof llama>, extra: Record<string, unknown>) {
    const cfg = keyedVars(vars([first, llama(LLAMA_URL)], { resume: { maxResumes: 0 }, ...extra }));
    const [a, b] = await Promise.all(["a", "b"].map((name) => createKey(cfg, { name, scopes: ["chat"] })));
    return { cfg, a: a!.key, b: b!.key, firstName: targetName({ kind: "llama", url: first.url }) };
  }
  /** Who serves the next request of key b (a stream, left as soon as its headers came). */
  async function nextTarget(cfg: Record<string, unknown>, key: string): Promise<string | null> {
    const { res, done } = await ask(cfg, key, { stream: true });
    const target = res.headers.get("x-switchyard-target");
    await res.body?.cancel();
    await done();
    return target;
  }

  it("answers cut by the request's own timeouts.totalMs, the server sending all along, are not health failures", async () => {
    // A token every 50 ms for ever, eight slots: three of a's answers at once, each cut at totalMs.
    const first = llama(fixture("slots-8/behave/endless"));
    const { cfg, a, b, firstName } = await setup(first, { circuit: { failureThreshold: 3, cooldownMs: 30_000 }, timeouts: { ...FAST, totalMs: 800, commitMs: 200 } });
    const cut = await Promise.all(
      [0, 1, 2].map(async () => {
        const { res, done } = await ask(cfg, a, { stream: true });
        const text = await res.text();
        await done();
        return { status: res.status, target: res.headers.get("x-switchyard-target"), text };
      }),
    );
    for (const c of cut) {
      expect(c.status).toBe(200);
      expect(c.target).toBe(firstName);
      expect(c.text).toContain("upstream_timeout");
      expect(c.text).toContain("timeouts.totalMs");
    }
    expect(await nextTarget(cfg, b)).toBe(firstName);
    await sleep(300);
    expect((await upstreamOf(first.url))?.circuit).toBe("closed");
  });

  it("clients that leave mid-answer, while the server works on the next token, are not health failures", async () => {
    // One token, then the server is busy (nothing until the client leaves): the client's departure,
    // noticed by a heartbeat, aborts the read the reader was waiting on.
    const first = llama(fixture("slots-8/behave/stall-after-first/60000"));
    const { cfg, a, b, firstName } = await setup(first, { circuit: { failureThreshold: 3, cooldownMs: 30_000 }, timeouts: { ...FAST, idleMs: 10_000, totalMs: 20_000, commitMs: 200, heartbeatMs: 100 } });
    await Promise.all(
      [0, 1, 2].map(async () => {
        const { res, done } = await ask(cfg, a, { stream: true });
        expect(res.headers.get("x-switchyard-target")).toBe(firstName);
        const reader = res.body!.getReader();
        await reader.read();
        await sleep(150);
        await reader.cancel();
        await done();
      }),
    );
    await sleep(300);
    expect(await nextTarget(cfg, b)).toBe(firstName);
    expect((await upstreamOf(first.url))?.circuit).toBe("closed");
  });

  it("a llama-server 500 the request caused (a schema it cannot convert) is answered at once: not retried there, not counted", async () => {
    const first = llama(fixture("behave/refuse-schema/error-json-schema-500"));
    // One counted failure would open the circuit.
    const { cfg, a, b, firstName } = await setup(first, { circuit: { failureThreshold: 1, cooldownMs: 30_000 } });
    const marker = `schema ${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
    const { res, done } = await ask(cfg, a, { messages: [{ role: "user", content: marker }], response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "foo" } } } });
    const body = await res.json<{ error: { type: string; message: string } }>();
    await done();
    expect(res.status).toBe(400);
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("JSON schema conversion failed");
    expect(res.headers.get("x-switchyard-attempts")).toBe("1");
    const arrived = (await fixtureLog<{ body: string }>("_requests")).filter((r) => r.body.includes(marker));
    expect(arrived).toHaveLength(1);
    expect(await nextTarget(cfg, b)).toBe(firstName);
    await sleep(300);
    expect((await upstreamOf(first.url))?.circuit).toBe("closed");
  });
});
