import { describe, expect, it } from "vitest";
import { FIXTURE_URL, call, configWith, received } from "./harness.ts";

// `POST /v1/embeddings` goes through the same attempt logic as chat (src/routing/attempt/try-targets.ts):
// same-server retries, failover, the circuit breaker's order and retries.maxAttempts, against the
// fixture upstream's embeddings behaviours (test/support/fixture-upstream.mjs).

let n = 0;
/** A fixture URL of its own (one health record and one circuit per test). */
const fixture = (path: string) => `${FIXTURE_URL}/u-emb${Date.now().toString(36)}${++n}/${path}`;
const llama = (url: string) => ({ kind: "llama", url });
const nameOf = (url: string) => `llama:${new URL(url).host}`;
const vars = (targets: unknown[], extra: Record<string, unknown> = {}) => configWith({ "team/embed": { targets } }, extra);

async function embed(v: Record<string, unknown>, input: unknown = "hello", init: RequestInit = {}) {
  const started = Date.now();
  const { res } = await call("/v1/embeddings", { ...init, json: { model: "team/embed", input } }, v);
  const body = (await res.json()) as any;
  // Switchyard's id for the request: the response's x-request-id, the one its upstream requests carry.
  const requestId = res.headers.get("x-request-id")!;
  return { res, body, requestId, elapsed: Date.now() - started, attempts: res.headers.get("x-switchyard-attempts") };
}

const sentFor = async (requestId: string) => (await received()).filter((r) => r.headers["x-request-id"] === requestId).map((r) => r.path);

describe("POST /v1/embeddings: retries, failover and health", () => {
  it("503 no slot with Retry-After: 1 → waits it out and retries the same server", async () => {
    const url = fixture("behave/busy-then-embed/1");
    const { res, body, requestId, elapsed, attempts } = await embed(vars([llama(url)]), ["a", "b"]);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(attempts).toBe("2");
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(res.headers.get("x-switchyard-target")).toBe(nameOf(url));
    expect(body).toMatchObject({ object: "list", model: "team/embed", x_switchyard: { target: nameOf(url), attempts: 2 } });
    expect(body.data.map((d: any) => d.index)).toEqual([0, 1]);
    expect(await sentFor(requestId)).toEqual(["/behave/busy-then-embed/1/v1/embeddings", "/behave/busy-then-embed/1/v1/embeddings"]);
  });

  it("an answer that stops mid-body → 504 upstream_timeout once timeouts.totalMs has passed", async () => {
    // The fixture sends its headers and one line, then nothing for 5 s.
    const { res, body, elapsed } = await embed(vars([llama(fixture("behave/stall-after-first/5000"))], { timeouts: { totalMs: 400 }, retries: { maxAttempts: 1 } }));
    expect(res.status, JSON.stringify(body)).toBe(504);
    expect(body.error.code).toBe("upstream_timeout");
    expect(body.error.message).toContain("did not finish the embeddings within timeouts.totalMs (400 ms)");
    expect(elapsed).toBeLessThan(3000);
  });

  it("connection refused → the next target at once", async () => {
    const good = fixture("behave/embed");
    const { res, body, attempts } = await embed(vars([llama("http://127.0.0.1:3"), llama(good)]));
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(attempts).toBe("2");
    expect(body.x_switchyard).toEqual({ target: nameOf(good), attempts: 2 });
    expect(body.data[0].embedding).toHaveLength(4);
  });

  it("a server whose circuit is open is tried last (attempts 2, 2, then 1)", async () => {
    const loading = fixture("behave/loading");
    const good = fixture("behave/embed");
    const v = vars([llama(loading), llama(good)], { circuit: { failureThreshold: 2, cooldownMs: 30_000 } });
    const seen: Array<string | null> = [];
    let last = "";
    for (let i = 0; i < 3; i++) {
      const { res, body, attempts, requestId } = await embed(v);
      expect(res.status, JSON.stringify(body)).toBe(200);
      seen.push(attempts);
      last = requestId;
    }
    expect(seen).toEqual(["2", "2", "1"]);
    expect(await sentFor(last)).toEqual(["/behave/embed/v1/embeddings"]);
  });

  it("a long upstream Retry-After is honoured as a cooldown: the next request skips that server", async () => {
    const limited = fixture("behave/rate-limited/30");
    const good = fixture("behave/embed");
    const v = vars([llama(limited), llama(good)]);
    expect((await embed(v)).attempts).toBe("2");
    const second = await embed(v);
    expect(second.attempts).toBe("1");
    expect(second.body.x_switchyard.target).toBe(nameOf(good));
  });

  it("retries.maxAttempts bounds the tries, same-server retries included", async () => {
    const broken = fixture("behave/html-500");
    const good = fixture("behave/embed");
    const bounded = await embed(vars([llama(broken), llama(good)], { retries: { maxAttempts: 2 } }));
    expect(bounded.res.status).toBe(502);
    expect(bounded.body.error.code).toBe("upstream_error");
    expect(bounded.attempts).toBe("2");
    expect(await sentFor(bounded.requestId)).toEqual(["/behave/html-500/v1/embeddings", "/behave/html-500/v1/embeddings"]);
    const unbounded = await embed(vars([llama(fixture("behave/html-500")), llama(good)]));
    expect(unbounded.res.status).toBe(200);
    expect(unbounded.attempts).toBe("3");
  });

  it("a 400 from the upstream is the answer at once: not retried, no failover", async () => {
    const first = fixture("behave/embed");
    const second = fixture("behave/embed");
    const { res, body, requestId, attempts } = await embed(vars([llama(first), llama(second)]), "");
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "upstream_error" });
    expect(body.error.message).toContain("Input content cannot be empty");
    expect(attempts).toBe("1");
    expect(await sentFor(requestId)).toEqual(["/behave/embed/v1/embeddings"]);
  });

  it("a browser target without an embedding session is skipped: not counted, and never masks a server's error", async () => {
    const masked = await embed(vars([llama("http://127.0.0.1:4"), { kind: "browser", model: "x" }]));
    expect(masked.res.status).toBe(502);
    expect(masked.body.error.code).toBe("upstream_unreachable");
    expect(masked.attempts).toBe("1");
    const good = fixture("behave/embed");
    const served = await embed(vars([{ kind: "browser", model: "x" }, llama(good)]));
    expect(served.res.status).toBe(200);
    expect(served.attempts).toBe("1");
    expect(served.body.x_switchyard).toEqual({ target: nameOf(good), attempts: 1 });
  });

  it("a client that leaves during a Retry-After wait: no second request goes upstream", async () => {
    const url = fixture("behave/busy-then-embed/1");
    const ac = new AbortController();
    const pending = call("/v1/embeddings", { json: { model: "team/embed", input: "x" }, signal: ac.signal }, vars([llama(url)]));
    await new Promise((r) => setTimeout(r, 300));
    ac.abort();
    const { res } = await pending;
    const requestId = res.headers.get("x-request-id")!;
    await res.text().catch(() => "");
    await new Promise((r) => setTimeout(r, 1200));
    expect(await sentFor(requestId)).toEqual(["/behave/busy-then-embed/1/v1/embeddings"]);
  });
});
