import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { upstreamKey } from "../../src/health/upstream-health.ts";
import { FIXTURE_URL, call, configWith, createKey, keyedVars, parseSse, received } from "./harness.ts";

// The admission queue (docs/architecture.md, "Admission queue") inside workerd, against the fixture
// upstream: its /slots reports one slot, so once the hub has sampled it every request beyond the one
// in flight waits in line. Which request the upstream got when is read from what it received.
const tag = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const hub = () => (env as unknown as Env).HEALTH_HUB.getByName("health");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Reports reach the hub at once and the hub samples every 200 ms: the slot count is known quickly.
// No request log: its batch waits up to a second in the waitUntil of the request that started it,
// and these tests time requests to their execution context's end.
const fast = { health: { snapshotTtlMs: 0, sampleMs: 200 }, observability: { log: false } };

/** A one-slot upstream of its own, answering `paced/<tokens>` (20 ms a token). */
const upstream = (name: string, tokens: number) => `${FIXTURE_URL}/u-q${name}${tag}/behave/paced/${tokens}`;

/**
 * Sends one request to `url` through model `model` and waits until the hub has sampled its slots and
 * this isolate's copy of the snapshot shows them: from then on the queue gates it.
 */
async function warm(vars: Record<string, unknown>, model: string, url: string, headers: Record<string, string> = {}) {
  const send = async () => {
    const { res, done } = await call("/v1/chat/completions", { json: { model, messages: [{ role: "user", content: `warm-up ${tag}` }] }, headers }, vars);
    expect(res.status).toBe(200);
    await res.text();
    await done();
  };
  await send();
  for (let i = 0; i < 50 && (await hub().snapshot()).upstreams[upstreamKey(url)]?.slotsTotal !== 1; i++) await sleep(100);
  expect((await hub().snapshot()).upstreams[upstreamKey(url)]?.slotsTotal).toBe(1);
  // This request's snapshot call refreshes the isolate's copy (TTL 0) in the background.
  await send();
  await sleep(150);
}

/** The requests the upstream received whose user message contains `marker`, in the order received. */
async function servedOrder(marker: string): Promise<string[]> {
  return (await received())
    .filter((r) => r.body.includes(marker))
    .map((r) => /\[(\w+)\]/.exec((JSON.parse(r.body).messages as Array<{ content: string }>).at(-1)!.content)![1]!);
}

describe("admission queue (one busy slot)", () => {
  it(
    "a burst of 3 keys × 20 requests is served in fair order: interleaved by key, not 20 of one key first",
    async () => {
      const url = upstream("fair", 3);
      const vars = keyedVars(configWith({ qfair: { targets: [{ kind: "llama", url }] } }, { ...fast, queue: { maxWaitMs: 60_000 } }));
      const keys = await Promise.all(["a", "b", "c"].map((name) => createKey(vars, { name, scopes: ["chat"] })));
      const ask = async (key: string, content: string, stream: boolean) => {
        const { res, done } = await call("/v1/chat/completions", { json: { model: "qfair", messages: [{ role: "user", content }], stream }, headers: { authorization: `Bearer ${key}` } }, vars);
        const body = await res.text();
        await done();
        return { status: res.status, body };
      };
      // Each key once (its record is cached from then on), then the slot count is known.
      for (const k of keys) expect((await ask(k.key, `warm-up ${tag}`, false)).status).toBe(200);
      await warm(vars, "qfair", url, { authorization: `Bearer ${keys[0]!.key}` });
      const marker = `burst-${tag}`;
      const started = Date.now();
      // a's twenty are sent first, then b's, then c's: first come first served would give a all 20 first.
      const answers = await Promise.all(keys.flatMap((k) => Array.from({ length: 20 }, (_, i) => ask(k.key, `${marker} [${k.name}] #${i}`, i % 2 === 0))));
      const elapsed = Date.now() - started;
      expect(answers.map((a) => a.status)).toEqual(Array(60).fill(200));
      const order = await servedOrder(marker);
      console.log(`fair order (${elapsed} ms): ${order.join("")}`);
      expect(order).toHaveLength(60);
      // Round-robin: in the first 30 served each key has about a third (10 if perfect).
      for (const key of ["a", "b", "c"]) expect(order.slice(0, 30).filter((k) => k === key).length, order.join("")).toBeGreaterThanOrEqual(8);
      // Never two of one key in a row while the others still wait, once all are in line.
      const lastB = order.lastIndexOf("b");
      const lastC = order.lastIndexOf("c");
      for (let i = 4; i < Math.min(lastB, lastC); i++) expect(order[i] === order[i - 1] && order[i] === order[i - 2], order.join("")).toBe(false);
      // One slot: each reached the upstream only once the one before had had its 60 ms answer.
      const times = (await received()).filter((r) => r.body.includes(marker)).map((r) => r.at);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      expect(Math.min(...gaps), gaps.join(",")).toBeGreaterThanOrEqual(50);
    },
    90_000,
  );

  it("a key's priority (admin API: set on create, changed by PATCH) is served before lower levels", async () => {
    const url = upstream("prio", 3);
    const vars = keyedVars(configWith({ qprio: { targets: [{ kind: "llama", url }] } }, { ...fast, queue: { maxWaitMs: 60_000 } }));
    const low = await createKey(vars, { name: "low", scopes: ["chat"], priority: -1 });
    const high = await createKey(vars, { name: "high", scopes: ["chat"] });
    expect((low as unknown as { priority: number }).priority).toBe(-1);
    const patched = await call(`/v1/admin/keys/${high.id}`, { method: "PATCH", body: JSON.stringify({ priority: 5 }), headers: { authorization: `Bearer ${vars.ADMIN_TOKEN}`, "content-type": "application/json" } }, vars);
    expect(await patched.res.json()).toMatchObject({ id: high.id, priority: 5 });
    await patched.done();
    const ask = async (key: string, content: string) => {
      const { res, done } = await call("/v1/chat/completions", { json: { model: "qprio", messages: [{ role: "user", content }] }, headers: { authorization: `Bearer ${key}` } }, vars);
      await res.text();
      await done();
      return res.status;
    };
    for (const k of [low, high]) expect(await ask(k.key, `warm-up ${tag}`)).toBe(200);
    await warm(vars, "qprio", url, { authorization: `Bearer ${low.key}` });
    const marker = `prio-${tag}`;
    const lows = Array.from({ length: 6 }, (_, i) => ask(low.key, `${marker} [low] #${i}`));
    await sleep(20);
    const highs = Array.from({ length: 3 }, (_, i) => ask(high.key, `${marker} [high] #${i}`));
    expect(await Promise.all([...lows, ...highs])).toEqual(Array(9).fill(200));
    const order = await servedOrder(marker);
    console.log(`priority order: ${order.join(" ")}`);
    // The first low went at once; the highs arrived while the lows waited and went right after it.
    expect(order.indexOf("high")).toBeLessThanOrEqual(2);
    expect(order.lastIndexOf("high")).toBeLessThanOrEqual(4);
  });

  it("one server full and another still loading: the request waits for the full one, not 503 model_loading (issue 28)", async () => {
    const url = upstream("loadfull", 60);
    const loading = `${FIXTURE_URL}/u-qload${tag}/behave/loading`;
    const vars = configWith({ qloadfull: { targets: [{ kind: "llama", url }, { kind: "llama", url: loading }] } }, { ...fast, queue: { maxWaitMs: 20_000 }, timeouts: { commitMs: 5000 } });
    await warm(vars, "qloadfull", url);
    // The full server churned a moment ago: its circuit is open (a restarted server's often is), so
    // the precedence of failures puts the loading server's 503 first.
    const down = { url, ok: false, kind: "unreachable" as const };
    await hub().observe({ upstreams: [{ url }], attempts: Array(5).fill(down), outcomes: [], policy: { circuit: { failureThreshold: 5, cooldownMs: 60_000, maxCooldownMs: 120_000 }, health: { sampleMs: 200, idleStopMs: 60_000 } } });
    await sleep(150);
    // One request holds the one slot for about 1.2 s.
    const blocker = call("/v1/chat/completions", { json: { model: "qloadfull", messages: [{ role: "user", content: `blocker ${tag}` }], stream: true } }, vars);
    await sleep(200);
    const startedAt = Date.now();
    const { res, done } = await call("/v1/chat/completions", { json: { model: "qloadfull", messages: [{ role: "user", content: `after the blocker ${tag}` }] } }, vars);
    const body = await res.json<{ choices?: Array<{ message: { content: string } }>; error?: { code: string } }>();
    await done();
    const waited = Date.now() - startedAt;
    // The loading server's 503 ranks first among the failures; the full one's turn comes all the same.
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.choices?.[0]?.message.content).toMatch(/^tok0 tok1/);
    expect(waited).toBeGreaterThanOrEqual(500);
    const b = await blocker;
    await b.res.text();
    await b.done();
  });

  it("one server full and another refusing the request as a client mistake: the 400 at once, no wait in line", async () => {
    const url = upstream("fullclient", 60);
    const mistake = `${FIXTURE_URL}/u-qmistake${tag}/behave/client-mistake-500`;
    const vars = configWith({ qfullclient: { targets: [{ kind: "llama", url }, { kind: "llama", url: mistake }] } }, { ...fast, queue: { maxWaitMs: 20_000 }, timeouts: { commitMs: 5000 } });
    await warm(vars, "qfullclient", url);
    const blocker = call("/v1/chat/completions", { json: { model: "qfullclient", messages: [{ role: "user", content: `blocker ${tag}` }], stream: true } }, vars);
    await sleep(200);
    const startedAt = Date.now();
    const { res, done } = await call("/v1/chat/completions", { json: { model: "qfullclient", messages: [{ role: "user", content: `mistaken ${tag}` }] } }, vars);
    const body = await res.json<{ error?: { code: string } }>();
    await done();
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(Date.now() - startedAt).toBeLessThan(800);
    const b = await blocker;
    await b.res.text();
    await b.done();
  });

  it("past queue.maxWaitMs before commit: 503 no_capacity with a Retry-After from the line", async () => {
    const url = upstream("refuse", 120);
    // A long commit grace: the wait (800 ms) ends before the response is committed.
    const vars = configWith({ qrefuse: { targets: [{ kind: "llama", url }] } }, { ...fast, queue: { maxWaitMs: 800 }, timeouts: { commitMs: 5000 } });
    await warm(vars, "qrefuse", url);
    // One request holds the slot for about 2.4 s.
    const blocker = call("/v1/chat/completions", { json: { model: "qrefuse", messages: [{ role: "user", content: `blocker ${tag}` }], stream: true } }, vars);
    await sleep(200);
    const startedAt = Date.now();
    const [plain, streamed] = await Promise.all(
      [false, true].map(async (stream) => {
        const { res, done } = await call("/v1/chat/completions", { json: { model: "qrefuse", messages: [{ role: "user", content: `refused ${tag}` }], stream } }, vars);
        const body = await res.json<{ error: { code: string; message: string } }>();
        await done();
        return { res, body };
      }),
    );
    const waited = Date.now() - startedAt;
    for (const { res, body } of [plain!, streamed!]) {
      expect(res.status).toBe(503);
      expect(body.error.code).toBe("no_capacity");
      expect(body.error.message).toMatch(/waited 0\.\d s in line/);
      const retryAfter = Number(res.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
    }
    console.log(`refused after ${waited} ms: Retry-After ${plain!.res.headers.get("retry-after")} / ${streamed!.res.headers.get("retry-after")}; ${plain!.body.error.message}`);
    expect(waited).toBeGreaterThanOrEqual(750);
    expect(waited).toBeLessThan(4000);
    // Nothing of theirs reached the upstream.
    expect((await received()).filter((r) => r.body.includes(`refused ${tag}`))).toHaveLength(0);
    const b = await blocker;
    await b.res.text();
    await b.done();
  });

  it("a stream waiting in line gets only `: keep-alive` comments, then its data; past the wait after commit, the error frame (stream) or envelope (non-stream)", async () => {
    const url = upstream("alive", 60);
    const vars = configWith({ qalive: { targets: [{ kind: "llama", url }] } }, { ...fast, queue: { maxWaitMs: 20_000 }, timeouts: { commitMs: 300, heartbeatMs: 100 } });
    await warm(vars, "qalive", url);
    const blocker = call("/v1/chat/completions", { json: { model: "qalive", messages: [{ role: "user", content: `blocker ${tag}` }], stream: true } }, vars);
    await sleep(150);
    const { res, done } = await call("/v1/chat/completions", { json: { model: "qalive", messages: [{ role: "user", content: `waiting ${tag}` }], stream: true } }, vars);
    expect(res.status).toBe(200);
    const raw = await res.text();
    await done();
    const blocks = raw.split("\n\n").filter(Boolean);
    const firstData = blocks.findIndex((b) => b.startsWith("data:"));
    // Waiting about a second behind the blocker: several heartbeats, and nothing but heartbeats before the data.
    expect(firstData).toBeGreaterThanOrEqual(3);
    expect(blocks.slice(0, firstData).every((b) => b === ": keep-alive")).toBe(true);
    const sse = parseSse(raw);
    expect(sse.done).toBe(true);
    expect(sse.frames.map((f) => f.choices?.[0]?.delta?.content ?? "").join("")).toMatch(/^tok0 tok1/);
    const b = await blocker;
    await b.res.text();
    await b.done();

    // The same wait, too short for the blocker: committed, so the outcome is in the body.
    const short = configWith({ qalive: { targets: [{ kind: "llama", url }] } }, { ...fast, queue: { maxWaitMs: 700 }, timeouts: { commitMs: 300, heartbeatMs: 100 } });
    const blocker2 = call("/v1/chat/completions", { json: { model: "qalive", messages: [{ role: "user", content: `blocker ${tag}` }], stream: true } }, short);
    await sleep(150);
    const [s, j] = await Promise.all(
      [true, false].map(async (stream) => {
        const r = await call("/v1/chat/completions", { json: { model: "qalive", messages: [{ role: "user", content: `too late ${tag}` }], stream } }, short);
        const text = await r.res.text();
        await r.done();
        return { status: r.res.status, text };
      }),
    );
    expect(s!.status).toBe(200);
    const frames = parseSse(s!.text);
    expect(frames.frames).toHaveLength(1);
    expect(frames.frames[0]!.error.code).toBe("no_capacity");
    expect(frames.done).toBe(false);
    expect(j!.status).toBe(200);
    expect(j!.text.startsWith(" ")).toBe(true);
    expect(JSON.parse(j!.text).error.code).toBe("no_capacity");
    const b2 = await blocker2;
    await b2.res.text();
    await b2.done();
  });
});

// Issue 26, finding 7: the line held only once the hub's /slots sample had reached the isolate, so in
// the simplest setup (one server, one slot, the first requests) a second request went straight to the
// full server and waited there. These run cold: a fresh upstream, no warm-up, default health timing.
describe("admission queue from the first request (one slot, no sample yet)", () => {
  /** A one-slot upstream of its own: a request whose last message is "hold" holds the slot for `ms`. */
  const holding = (name: string, ms: number) => `${FIXTURE_URL}/u-c${name}${tag}/behave/hold/${ms}`;
  const ask = (vars: Record<string, unknown>, model: string, key: string, marker: string, last: string, stream = false) =>
    call("/v1/chat/completions", { json: { model, stream, messages: [{ role: "system", content: marker }, { role: "user", content: last }] }, headers: { authorization: `Bearer ${key}` } }, vars);
  const reached = async (marker: string) => (await received()).filter((r) => r.body.includes(marker));
  async function until(fn: () => Promise<boolean>, ms = 5000) {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(25)) if (await fn()) return true;
    return false;
  }

  it("a second request while a long answer holds the only slot waits in Switchyard's line, never reaches the server, and ends 503 no_capacity at queue.maxWaitMs", async () => {
    const url = holding("never", 600_000);
    // A commit grace longer than the wait, so the refusal keeps its status.
    const vars = keyedVars(configWith({ qcold: { targets: [{ kind: "llama", url }] } }, { queue: { maxWaitMs: 2000 }, timeouts: { commitMs: 5000 } }));
    const [a, b] = await Promise.all(["a", "b"].map((name) => createKey(vars, { name, scopes: ["chat"] })));
    const held = `held ${tag}`;
    const blocker = await ask(vars, "qcold", a!.key, held, "hold", true);
    expect(blocker.res.status).toBe(200);
    const reader = blocker.res.body!.getReader();
    await reader.read();
    expect(await until(async () => (await reached(held)).length === 1)).toBe(true);

    const second = `second ${tag}`;
    const startedAt = Date.now();
    const { res, done } = await ask(vars, "qcold", b!.key, second, "hi");
    const body = await res.json<{ error: { code: string; message: string } }>();
    const waited = Date.now() - startedAt;
    await done();
    console.log(`second request: ${res.status} ${body.error?.code} after ${waited} ms (${body.error?.message})`);
    expect(res.status).toBe(503);
    expect(body.error.code).toBe("no_capacity");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(waited).toBeGreaterThanOrEqual(1500);
    expect(waited).toBeLessThan(6000);
    expect(await reached(second)).toHaveLength(0);
    await reader.cancel();
    await blocker.done();
  }, 30_000);

  it("behind a slot held from the first request, keys take turns: a's burst does not go first", async () => {
    const url = holding("turns", 1500);
    const vars = keyedVars(configWith({ qturns: { targets: [{ kind: "llama", url }] } }, { queue: { maxWaitMs: 30_000 } }));
    const keys = await Promise.all(["a", "b", "c"].map((name) => createKey(vars, { name, scopes: ["chat"] })));
    const marker = `turns ${tag}`;
    const blocker = ask(vars, "qturns", keys[0]!.key, `${marker} [a] #hold`, "hold", true);
    expect(await until(async () => (await reached(marker)).length === 1)).toBe(true);
    // a's five first, then b's and c's: first come first served would give a all five first.
    const burst = keys.flatMap((k) => Array.from({ length: 5 }, (_, i) => ask(vars, "qturns", k.key, `${marker} [${k.name}] #${i}`, "hi")));
    const answers = await Promise.all(
      burst.map(async (p) => {
        const { res, done } = await p;
        await res.text();
        await done();
        return res.status;
      }),
    );
    const b = await blocker;
    await b.res.text();
    await b.done();
    expect(answers).toEqual(Array(15).fill(200));
    const order = (await reached(marker)).map((r) => /\[(\w+)\]/.exec(r.body)![1]!);
    console.log(`served after the held slot: ${order.join("")}`);
    expect(order).toHaveLength(16);
    // After the blocker: the first six served hold two of each key.
    for (const key of ["a", "b", "c"]) expect(order.slice(1, 7).filter((k) => k === key).length, order.join("")).toBe(2);
  }, 30_000);
});
