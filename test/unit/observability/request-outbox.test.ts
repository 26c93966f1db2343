// The request outbox: finished requests wait as they are, and a batch's records and spans are built
// together when it is handled (a second after its first request, or at once when full); its
// spans then leave in one export, with each request's record made from what the run told.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { emptyFacts } from "../../../src/observability/answer-facts.ts";
import { BATCH_MAX, BATCH_MS, queueFinished, recordOfFinished, type Destinations, type FinishedRequest } from "../../../src/observability/request-outbox.ts";
import { RequestTrace } from "../../../src/observability/request-trace.ts";
import type { EnvVars } from "../../../src/config/env-vars.ts";

type Posted = { resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ traceId: string; kind: number; attributes: Array<{ key: string; value: Record<string, unknown> }> }> }> }> };

/** The collector, as global fetch: each export's spans. */
function collector() {
  const posts: Posted["resourceSpans"][number]["scopeSpans"][number]["spans"][] = [];
  vi.stubGlobal("fetch", async (_url: string, init: RequestInit) => {
    const body = JSON.parse(new TextDecoder().decode(init.body as Uint8Array)) as Posted;
    posts.push(body.resourceSpans[0]!.scopeSpans[0]!.spans);
    return new Response("{}");
  });
  return posts;
}

let n = 0;
/** A finished request whose run told `completionTokens`; built counts how often its answer was read. */
function finished(to: Destinations, completionTokens: number, built: { count: number }): FinishedRequest {
  const id = `req_${++n}`;
  return {
    request: { id, arrivedAt: 1_000_000, key: null, endpoint: "/v1/chat/completions", model: "m", stream: false, status: 200, target: "llama:10.0.0.1:8080", attempts: 1, outcomes: [], sse: false, firstTokenAt: 1_000_100, endedAt: 1_000_200, cancelled: false },
    answer: { facts: () => (built.count++, { ...emptyFacts(), model: "m", promptTokens: 3, completionTokens, finishReasons: ["stop"], extension: { target: "llama:10.0.0.1:8080", attempts: 1 } }) },
    trace: new RequestTrace(null),
    to,
  };
}

/** A log instance of its own, a collector, and a count of the answers read. */
function setup() {
  const env = { REQUEST_LOG_NAME: `outbox-${crypto.randomUUID()}` } as unknown as EnvVars;
  const to: Destinations = { log: null, otlp: { endpoint: `http://collector-${crypto.randomUUID()}.test`, headers: {}, timeoutMs: 5000 } };
  const defer = (p: Promise<unknown>) => void p.catch(() => {});
  return { env, to, defer, built: { count: 0 }, posts: collector() };
}

const tokensOf = (s: Posted["resourceSpans"][number]["scopeSpans"][number]["spans"][number]) => Number(s.attributes.find((a) => a.key === "gen_ai.usage.output_tokens")?.value.intValue);

describe("the request outbox", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it("a batch is built when handled, not as its requests end, and its spans leave in one export", async () => {
    const { env, to, defer, built, posts } = setup();
    for (const tokens of [5, 6, 7]) queueFinished(env, finished(to, tokens, built), defer);
    await vi.advanceTimersByTimeAsync(BATCH_MS - 10);
    expect(built.count).toBe(0);
    expect(posts).toEqual([]);
    await vi.advanceTimersByTimeAsync(20);
    expect(built.count).toBe(3);
    expect(posts).toHaveLength(1);
    // Each request: its SERVER span with the usage its run told, and its attempt's span, in one trace.
    const servers = posts[0]!.filter((s) => s.kind === 2);
    expect(servers.map(tokensOf)).toEqual([5, 6, 7]);
    expect(posts[0]!.filter((s) => s.kind === 3)).toHaveLength(3);
    for (const s of servers) expect(posts[0]!.filter((c) => c.traceId === s.traceId)).toHaveLength(2);
  });

  it("a request refused before a key was known exports no span: a flood of them cannot crowd keyed spans out (issue 40, finding 7)", async () => {
    const { env, to, defer, built, posts } = setup();
    const keyed = finished(to, 9, built);
    for (let i = 0; i < 50; i++) {
      const refused = finished(to, 1, built);
      queueFinished(env, { ...refused, request: { ...refused.request, status: 401, unauthenticated: true } }, defer);
    }
    queueFinished(env, keyed, defer);
    await vi.advanceTimersByTimeAsync(BATCH_MS + 10);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.filter((s) => s.kind === 2).map(tokensOf)).toEqual([9]);
  });

  it("a full batch is handled at once", async () => {
    const { env, to, defer, built, posts } = setup();
    for (let i = 0; i < BATCH_MAX; i++) queueFinished(env, finished(to, 1, built), defer);
    await vi.advanceTimersByTimeAsync(1);
    expect(built.count).toBe(BATCH_MAX);
    expect(posts.flat()).toHaveLength(2 * BATCH_MAX);
  });

  it("a batch handled early ends the wait its first request holds: that request's waitUntil does not last the second", async () => {
    const { env, to, built, posts } = setup();
    const held: Array<{ settled: boolean }> = [];
    const defer = (p: Promise<unknown>) => {
      const h = { settled: false };
      held.push(h);
      void p.finally(() => (h.settled = true)).catch(() => {});
    };
    queueFinished(env, finished(to, 1, built), defer);
    await vi.advanceTimersByTimeAsync(1);
    expect(held).toHaveLength(1);
    expect(held[0]!.settled).toBe(false);
    for (let i = 1; i < BATCH_MAX; i++) queueFinished(env, finished(to, 1, built), defer);
    // The full batch was handled without any time passing, and the first request's wait with it.
    await vi.advanceTimersByTimeAsync(0);
    expect(built.count).toBe(BATCH_MAX);
    expect(held[0]!.settled).toBe(true);
    expect(posts).toHaveLength(1);
    // Its timer, when it fires, finds nothing to handle.
    await vi.advanceTimersByTimeAsync(BATCH_MS);
    expect(built.count).toBe(BATCH_MAX);
    expect(posts).toHaveLength(1);
  });

  it("an error body's code is the record's error", () => {
    const built = { count: 0 };
    const f = { ...finished({ log: null, otlp: null }, 0, built), toldError: "invalid_value" };
    f.request.status = 400;
    expect(recordOfFinished(f)).toMatchObject({ status: 400, error: "invalid_value", completion_tokens: 0 });
  });
});
