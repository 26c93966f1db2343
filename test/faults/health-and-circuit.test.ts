import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { chat, fixture, llama, outcome, sleep, vars } from "./fault-harness.ts";

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
    await sleep(300);
    const res = await get("/metrics", { ADMIN_TOKEN: "admin-for-tests" }, "admin-for-tests");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
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
