// The isolate's span exporter: finished requests' spans gathered and POSTed to the collector as
// OTLP/HTTP JSON in batches, from ctx.waitUntil, each export under a timeout. A collector that is
// down or hangs costs the client nothing: spans past a bounded buffer are dropped and counted.
import { spanJson, type SpanData } from "./otlp-spans.ts";
import { SpanBatch } from "./span-batch.ts";

export interface OtlpTarget {
  /** `<endpoint>/v1/traces` is where spans go. */
  endpoint: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** A batch leaves when it holds this many spans, or this long after its first. */
export const SPAN_BATCH_MAX = 512;
export const SPAN_BATCH_MS = 1000;
/** A batch's body is at most this many bytes (a collector's default request bound is larger). */
export const SPAN_BATCH_BYTES = 2 * 1024 * 1024;
/** Spans waiting beyond this (the collector slow or down) are dropped. */
export const SPAN_BUFFER_MAX = 4096;

interface Exporter {
  target: OtlpTarget;
  /** The spans waiting, in batches encoded as they come (every batch but the last is full). */
  batches: SpanBatch[];
  /** How many spans the batches hold. */
  queued: number;
  /**
   * When an export was scheduled (null: none is): requests then only add to the queue. One older
   * than an export can take counts as lost (the request whose waitUntil held it was cut short).
   */
  scheduledAt: number | null;
  /**
   * When the export on its way started (null: none): the next one waits, one at a time per collector.
   * An export older than its timeout counts as over (its request may have been cut short).
   */
  busySince: number | null;
  /** Where the next batch's buffer starts: the last batch sent's `nextBatchBytes` (none yet: SpanBatch's own start). */
  sizeHint?: number;
}

const exporters = new Map<string, Exporter>();
/** Counters for the operator (GET /v1/admin/observability). */
export const otlpStats = { exported: 0, dropped: 0, failedExports: 0, lastError: null as string | null };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An export is scheduled and still alive: its wait, its turn behind another (up to the timeout) and a follow-up fit within this. */
const scheduled = (ex: Exporter): boolean => ex.scheduledAt !== null && Date.now() - ex.scheduledAt < ex.target.timeoutMs + 4 * SPAN_BATCH_MS;

/**
 * Queues spans for `target`; `defer` keeps the export alive past the response (ctx.waitUntil). The
 * export leaves `waitMs` after the first spans queued (the request outbox, which batches already,
 * passes 0), at once when a full batch waits, and never while another export to `target` is on its way.
 */
export function queueSpans(target: OtlpTarget, spans: readonly SpanData[], defer: (p: Promise<unknown>) => void, { fetcher = fetch, waitMs = SPAN_BATCH_MS }: { fetcher?: typeof fetch; waitMs?: number } = {}): void {
  const id = `${target.endpoint}\n${JSON.stringify(target.headers)}`;
  let ex = exporters.get(id);
  if (!ex) exporters.set(id, (ex = { target, batches: [], queued: 0, scheduledAt: null, busySince: null }));
  ex.target = target;
  for (const span of spans) {
    if (ex.queued >= SPAN_BUFFER_MAX) {
      otlpStats.dropped++;
      continue;
    }
    const text = spanJson(span);
    const last = ex.batches.at(-1);
    if (last && last.count < SPAN_BATCH_MAX && last.add(text)) {
      ex.queued++;
      continue;
    }
    const next = new SpanBatch(SPAN_BATCH_BYTES, ex.sizeHint);
    if (!next.add(text)) {
      otlpStats.dropped++; // one span over the body's bound (its attributes are bounded far below it)
      continue;
    }
    ex.batches.push(next);
    ex.queued++;
  }
  if (scheduled(ex)) return;
  ex.scheduledAt = Date.now();
  const full = ex.batches.length > 1 || (ex.batches[0]?.count ?? 0) >= SPAN_BATCH_MAX;
  defer((full || waitMs <= 0 ? Promise.resolve() : sleep(waitMs)).then(() => exportNow(ex, fetcher)));
}

/**
 * Sends what waits: a batch, then more while full batches wait. While another request's export is
 * on its way this one waits its turn by polling (a promise of another request's context is not
 * awaited across requests), and gives up after the export's timeout: the spans stay for the next
 * request's export.
 */
async function exportNow(ex: Exporter, fetcher: typeof fetch, followUp = false): Promise<void> {
  const busy = () => ex.busySince !== null && Date.now() - ex.busySince < ex.target.timeoutMs + SPAN_BATCH_MS;
  for (let waited = 0; busy(); waited += SPAN_BATCH_MS) {
    if (waited > ex.target.timeoutMs) {
      ex.scheduledAt = null;
      return;
    }
    await sleep(SPAN_BATCH_MS);
  }
  ex.scheduledAt = null;
  try {
    // Only full batches follow one another at once. Sending whatever had come during the last POST
    // (a request's few spans) kept one POST after another going under steady traffic, each costing
    // the runtime a request's worth of CPU (`ab.mjs cpu --otlp`: ×1.07 a 16-token request).
    do {
      ex.busySince = Date.now();
      const batch = ex.batches.shift();
      if (!batch) break;
      ex.queued -= batch.count;
      ex.sizeHint = batch.nextBatchBytes();
      await post(ex.target, batch, fetcher);
    } while (ex.batches.length > 1 || (ex.batches[0]?.count ?? 0) >= SPAN_BATCH_MAX);
  } finally {
    ex.busySince = null;
  }
  // The rest goes with the next export, within a second: one a request scheduled meanwhile (any that
  // ended while the POST was on its way did), or else this one's follow-up. After the follow-up none
  // is left that no request scheduled: spans come only with requests, and each schedules when none is.
  if (ex.queued && !scheduled(ex) && !followUp) {
    ex.scheduledAt = Date.now();
    await sleep(SPAN_BATCH_MS);
    return exportNow(ex, fetcher, true);
  }
}

async function post(target: OtlpTarget, batch: SpanBatch, fetcher: typeof fetch): Promise<void> {
  try {
    const res = await fetcher(`${target.endpoint}/v1/traces`, {
      method: "POST",
      headers: { ...target.headers, "content-type": "application/json" },
      body: batch.body(),
      signal: AbortSignal.timeout(target.timeoutMs),
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`the collector answered ${res.status}`);
    otlpStats.exported += batch.count;
  } catch (e) {
    otlpStats.failedExports++;
    otlpStats.dropped += batch.count;
    otlpStats.lastError = String(e instanceof Error ? e.message : e).slice(0, 200);
  }
}
