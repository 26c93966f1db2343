// The span exporter's pacing: under steady traffic a batch leaves about once a second (or when full),
// not one POST after another; every span is sent; a lone request's spans leave within a second.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { queueSpans, SPAN_BATCH_MAX, SPAN_BATCH_MS } from "../../../src/observability/otlp-export.ts";
import type { SpanData } from "../../../src/observability/otlp-spans.ts";

let n = 0;
const span = (): SpanData => ({ traceId: "a".repeat(32), spanId: (++n).toString(16).padStart(16, "0"), name: "chat m", kind: 2, startMs: 0, endMs: 1, attributes: {}, status: { code: 0 } });

/** A collector that takes `ms` per POST, recording each export's span count. */
function collector(ms: number) {
  const posts: number[] = [];
  const fetcher = (async (_url: string, init: RequestInit) => {
    await new Promise((r) => setTimeout(r, ms));
    posts.push((JSON.parse(new TextDecoder().decode(init.body as Uint8Array)) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: unknown[] }> }> }).resourceSpans[0]!.scopeSpans[0]!.spans.length);
    return new Response("{}");
  }) as unknown as typeof fetch;
  return { posts, fetcher };
}

const target = () => ({ endpoint: `http://collector-${crypto.randomUUID()}.test`, headers: {}, timeoutMs: 5000 });
const defer = (p: Promise<unknown>) => void p.catch(() => {});

describe("OTLP export pacing", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("steady traffic (400 requests a second, each ending with 2 spans) sends a few batches a second, every span once", async () => {
    const t = target();
    const c = collector(3);
    for (let i = 0; i < 1200; i++) {
      queueSpans(t, [span(), span()], defer, { fetcher: c.fetcher });
      await vi.advanceTimersByTimeAsync(2.5);
    }
    await vi.advanceTimersByTimeAsync(5 * SPAN_BATCH_MS);
    expect(c.posts.reduce((a, b) => a + b, 0)).toBe(2400);
    // 3 s of traffic: 2,400 spans are 5 full batches, plus about one partial batch a second.
    expect(c.posts.length).toBeLessThanOrEqual(12);
    expect(Math.max(...c.posts)).toBeLessThanOrEqual(SPAN_BATCH_MAX);
  });

  it("a lone request's spans leave within a second; spans that came during an export follow within another", async () => {
    const t = target();
    const c = collector(200);
    queueSpans(t, [span(), span()], defer, { fetcher: c.fetcher });
    await vi.advanceTimersByTimeAsync(SPAN_BATCH_MS + 100);
    // The POST is on its way: a request ending now is not lost behind it.
    queueSpans(t, [span()], defer, { fetcher: c.fetcher });
    await vi.advanceTimersByTimeAsync(150);
    expect(c.posts).toEqual([2]);
    await vi.advanceTimersByTimeAsync(3 * SPAN_BATCH_MS);
    expect(c.posts).toEqual([2, 1]);
  });

  it("spans queued already batched (waitMs 0, the request outbox) leave at once, one export at a time", async () => {
    const t = target();
    const c = collector(200);
    queueSpans(t, [span(), span(), span()], defer, { fetcher: c.fetcher, waitMs: 0 });
    await vi.advanceTimersByTimeAsync(1);
    // On its way (the collector answers in 200 ms): the next batch waits its turn.
    queueSpans(t, [span()], defer, { fetcher: c.fetcher, waitMs: 0 });
    await vi.advanceTimersByTimeAsync(250);
    expect(c.posts).toEqual([3]);
    await vi.advanceTimersByTimeAsync(3 * SPAN_BATCH_MS);
    expect(c.posts).toEqual([3, 1]);
  });
});
