// The isolate's finished requests, gathered and turned into what the request log and the traces
// keep a batch at a time: a second after the batch's first request, or at once when it is full,
// always from ctx.waitUntil, so a request never waits on the log or the collector. A request's own
// path only queues what it learned; its record, log row and spans are built here, in one loop per
// batch, where that code runs hot (built at the end of each request it cost several times the CPU:
// bench/overhead/NOTES.md, "4 Dec").
import type { EnvVars } from "../config/env-vars.ts";
import { wakeableDelay } from "../lib/wakeable-delay.ts";
import type { AnswerFacts } from "./answer-facts.ts";
import type { Capture } from "./capture.ts";
import { queueSpans, type OtlpTarget } from "./otlp-export.ts";
import { requestSpans, type SpanData } from "./otlp-spans.ts";
import { recordOf, type DetailedRecord, type RequestFacts } from "./request-record.ts";
import type { LogRow, RequestLog, Retention } from "./request-log.ts";
import type { RequestTrace } from "./request-trace.ts";

/** Where a configuration sends finished requests: the log (with its retention) and the collector; null for what is off. */
export interface Destinations {
  log: Retention | null;
  otlp: OtlpTarget | null;
}

/** A finished request as its path leaves it: what its record is made of, and where it goes. */
export interface FinishedRequest {
  /** What the middleware knew of the request once its answer ended. */
  request: RequestFacts;
  /** The answer's facts (the run's, read in the batch: the run is over). */
  answer: { facts(): AnswerFacts };
  /** The error code an error body told, when no run did. */
  toldError?: string;
  capture?: Capture;
  /** Its trace, when traces are exported and it is sampled. */
  trace?: RequestTrace;
  to: Destinations;
}

/** A batch is handled when it holds this many requests, or this long after its first. */
export const BATCH_MAX = 256;
export const BATCH_MS = 1000;

interface Outbox {
  env: EnvVars;
  waiting: FinishedRequest[];
  /** When a batch's handling was scheduled (in some request's waitUntil); null: none is. One older than STALE_MS counts as lost (its request was cut short). */
  scheduledAt: number | null;
  /** Ends the scheduled batch's wait: a batch handled early (full, or for the admin list) releases the waitUntil of the request that scheduled it. */
  wake: (() => void) | null;
}
const STALE_MS = 5 * BATCH_MS;

/** One outbox per log instance (tests use several). */
const outboxes = new Map<string, Outbox>();
export const logStats = { written: 0, dropped: 0, failedBatches: 0 };

/** The RequestLog instance: "requests", or REQUEST_LOG_NAME (tests give each case a log of its own). */
export function requestLogName(env: EnvVars): string {
  const name = env.REQUEST_LOG_NAME;
  return typeof name === "string" && name !== "" ? name : "requests";
}

export function requestLog(env: EnvVars): DurableObjectStub<RequestLog> | null {
  const ns = env.REQUEST_LOG as DurableObjectNamespace<RequestLog> | undefined;
  return ns ? ns.getByName(requestLogName(env)) : null;
}

/** Queues a finished request; `defer` keeps the batch's handling alive past the response (ctx.waitUntil). */
export function queueFinished(env: EnvVars, finished: FinishedRequest, defer: (p: Promise<unknown>) => void): void {
  const name = requestLogName(env);
  let box = outboxes.get(name);
  if (!box) outboxes.set(name, (box = { env, waiting: [], scheduledAt: null, wake: null }));
  box.env = env;
  box.waiting.push(finished);
  if (box.waiting.length >= BATCH_MAX) defer(flush(name, defer));
  else if (box.scheduledAt === null || Date.now() - box.scheduledAt > STALE_MS) {
    // The request that starts a batch holds its timer (in its waitUntil); the others only add to it.
    box.scheduledAt = Date.now();
    const delay = wakeableDelay(BATCH_MS);
    box.wake = delay.wake;
    defer(delay.ended.then(() => flush(name, defer)));
  }
}

/**
 * Handles what waits for `name` now (the admin list does, so this isolate's latest requests are in
 * it): the records built, the log's rows sent, the spans queued for export. `defer` keeps the export alive.
 */
export async function flush(name: string, defer: (p: Promise<unknown>) => void): Promise<void> {
  const box = outboxes.get(name);
  if (!box) return;
  box.scheduledAt = null;
  const wake = box.wake;
  box.wake = null;
  wake?.();
  if (!box.waiting.length) return;
  const batch = box.waiting;
  box.waiting = [];
  const rows: LogRow[] = [];
  const captures: Array<{ index: number; capture: string }> = [];
  let retention: Retention | null = null;
  // Spans go in one call per collector (a configuration's destinations are shared by its requests).
  const spans = new Map<OtlpTarget, SpanData[]>();
  for (const f of batch) {
    const record = recordOfFinished(f);
    if (f.to.log) {
      retention = f.to.log;
      if (f.capture) captures.push({ index: rows.length, capture: JSON.stringify(f.capture) });
      rows.push(rowOf(record, f.request.arrivedAt, f.request.unauthenticated === true));
    }
    const t = f.trace;
    // A request refused before a key was known exports no span: a flood of them would crowd the
    // keyed requests' spans out of the exporter's buffer (they are counted in /metrics instead).
    if (t && f.to.otlp && !f.request.unauthenticated) {
      let list = spans.get(f.to.otlp);
      if (!list) spans.set(f.to.otlp, (list = []));
      list.push(...requestSpans(record, t, f.request.arrivedAt, t.attempts));
    }
  }
  // The batch is the export's pacing: its spans leave at once (one export at a time per collector).
  for (const [collector, list] of spans) queueSpans(collector, list, defer, { waitMs: 0 });
  if (!retention) return;
  const log = requestLog(box.env);
  if (!log) return;
  try {
    await log.add(rows, captures, retention);
    logStats.written += rows.length;
  } catch (e) {
    // The log is best effort: a batch that does not land is said in the Worker's log and counted.
    logStats.failedBatches++;
    logStats.dropped += rows.length;
    console.error(`[request-log] ${rows.length} requests were not logged: ${String(e instanceof Error ? e.message : e).slice(0, 200)}`);
  }
}

/** A finished request's record: its facts, with the answer the run told (and the error an error body told). */
export function recordOfFinished(f: FinishedRequest): DetailedRecord {
  const answer = f.answer.facts();
  if (f.toldError !== undefined) answer.error = f.toldError;
  return recordOf(f.request, answer);
}

/** A record as the RequestLog stores it: its columns, then its JSON. */
function rowOf(r: DetailedRecord, arrivedAt: number, unauthenticated: boolean): LogRow {
  return [r.id, arrivedAt, r.key, r.key_name, r.model, r.error !== null || r.status >= 400 ? 1 : 0, JSON.stringify(r), r.client_request_id, unauthenticated ? 1 : 0];
}
