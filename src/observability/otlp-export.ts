// The isolate's span exporter: finished requests' spans gathered and POSTed to the collector as
// OTLP/HTTP JSON in batches, from ctx.waitUntil, each export under a timeout. A collector that is
// down or hangs costs the client nothing: spans past a bounded buffer are dropped and counted.
import { exportBody, spanJson, type SpanData } from "./otlp-spans.ts";

export interface OtlpTarget {
  /** `<endpoint>/v1/traces` is where spans go. */
  endpoint: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

/** A batch leaves when it holds this many spans, or this long after its first. */
export const SPAN_BATCH_MAX = 512;
export const SPAN_BATCH_MS = 1000;
/** Spans waiting beyond this (the collector slow or down) are dropped. */
export const SPAN_BUFFER_MAX = 4096;

interface Exporter {
  target: OtlpTarget;
  /** Each span's OTLP/JSON text (written when queued: a queued span holds one string, not its objects). */
  spans: string[];
  scheduled: boolean;
  /**
   * When the export on its way started (null: none): the next one waits, one at a time per collector.
   * An export older than its timeout counts as over (its request may have been cut short).
   */
  busySince: number | null;
}

const exporters = new Map<string, Exporter>();
/** Counters for the operator (GET /v1/admin/observability). */
export const otlpStats = { exported: 0, dropped: 0, failedExports: 0, lastError: null as string | null };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Queues a request's spans for `target`; `defer` keeps the export alive past the response (ctx.waitUntil). */
export function queueSpans(target: OtlpTarget, spans: readonly SpanData[], defer: (p: Promise<unknown>) => void, fetcher: typeof fetch = fetch): void {
  const id = `${target.endpoint}\n${JSON.stringify(target.headers)}`;
  let ex = exporters.get(id);
  if (!ex) exporters.set(id, (ex = { target, spans: [], scheduled: false, busySince: null }));
  ex.target = target;
  const room = SPAN_BUFFER_MAX - ex.spans.length;
  if (room < spans.length) otlpStats.dropped += spans.length - Math.max(room, 0);
  for (let i = 0; i < Math.min(room, spans.length); i++) ex.spans.push(spanJson(spans[i]!));
  if (ex.scheduled) return;
  ex.scheduled = true;
  const wait = ex.spans.length >= SPAN_BATCH_MAX ? 0 : SPAN_BATCH_MS;
  defer(sleep(wait).then(() => exportNow(ex, fetcher)));
}

/**
 * Sends what waits, a batch at a time. While another request's export is on its way this one waits
 * its turn by polling (a promise of another request's context is not awaited across requests), and
 * gives up after the export's timeout: the spans stay for the next request's export.
 */
async function exportNow(ex: Exporter, fetcher: typeof fetch): Promise<void> {
  const busy = () => ex.busySince !== null && Date.now() - ex.busySince < ex.target.timeoutMs + SPAN_BATCH_MS;
  for (let waited = 0; busy(); waited += SPAN_BATCH_MS) {
    if (waited > ex.target.timeoutMs) {
      ex.scheduled = false;
      return;
    }
    await sleep(SPAN_BATCH_MS);
  }
  ex.scheduled = false;
  try {
    while (ex.spans.length) {
      ex.busySince = Date.now();
      await post(ex.target, ex.spans.splice(0, SPAN_BATCH_MAX), fetcher);
    }
  } finally {
    ex.busySince = null;
  }
}

async function post(target: OtlpTarget, spans: string[], fetcher: typeof fetch): Promise<void> {
  try {
    const res = await fetcher(`${target.endpoint}/v1/traces`, {
      method: "POST",
      headers: { ...target.headers, "content-type": "application/json" },
      body: exportBody(spans),
      signal: AbortSignal.timeout(target.timeoutMs),
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`the collector answered ${res.status}`);
    otlpStats.exported += spans.length;
  } catch (e) {
    otlpStats.failedExports++;
    otlpStats.dropped += spans.length;
    otlpStats.lastError = String(e instanceof Error ? e.message : e).slice(0, 200);
  }
}
