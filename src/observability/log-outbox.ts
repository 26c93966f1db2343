// The isolate's side of the request log: finished requests gathered and sent to the RequestLog
// Durable Object in batches (at most one call a second per isolate, or at once when a batch is full),
// always from ctx.waitUntil: a request never waits on the log.
import type { EnvVars } from "../config/env-vars.ts";
import type { Capture } from "./capture.ts";
import type { DetailedRecord } from "./request-record.ts";
import type { LogRow, RequestLog, Retention } from "./request-log.ts";

/** One finished request as an isolate queues it: its record, and its capture when capture is on. */
export interface LogEntry {
  record: DetailedRecord;
  capture?: Capture;
}

/** A batch is sent when it holds this many requests, or this long after its first. */
export const BATCH_MAX = 256;
export const BATCH_MS = 1000;
/** Requests waiting beyond this (the log unreachable for a while) are dropped, oldest first, and counted. */
const PENDING_MAX = 2048;

/** The RequestLog instance: "requests", or REQUEST_LOG_NAME (tests give each case a log of its own). */
export function requestLogName(env: EnvVars): string {
  const name = env.REQUEST_LOG_NAME;
  return typeof name === "string" && name !== "" ? name : "requests";
}

export function requestLog(env: EnvVars): DurableObjectStub<RequestLog> | null {
  const ns = env.REQUEST_LOG as DurableObjectNamespace<RequestLog> | undefined;
  return ns ? ns.getByName(requestLogName(env)) : null;
}

interface Outbox {
  env: EnvVars;
  entries: LogEntry[];
  retention: Retention;
  /** A delayed send is pending (in some request's waitUntil). */
  scheduled: boolean;
}

/** One outbox per log instance (tests use several). */
const outboxes = new Map<string, Outbox>();
export const logStats = { written: 0, dropped: 0, failedBatches: 0 };

/** Queues a finished request for the log; `defer` keeps the send alive past the response (ctx.waitUntil). */
export function queueLogEntry(env: EnvVars, entry: LogEntry, retention: Retention, defer: (p: Promise<unknown>) => void): void {
  const name = requestLogName(env);
  let box = outboxes.get(name);
  if (!box) outboxes.set(name, (box = { env, entries: [], retention, scheduled: false }));
  box.env = env;
  box.retention = retention;
  box.entries.push(entry);
  if (box.entries.length > PENDING_MAX) logStats.dropped += box.entries.splice(0, box.entries.length - PENDING_MAX).length;
  if (box.entries.length >= BATCH_MAX) defer(send(name));
  else if (!box.scheduled) {
    // The request that starts a batch holds its timer (in its waitUntil); the others only add to it.
    box.scheduled = true;
    defer(new Promise((r) => setTimeout(r, BATCH_MS)).then(() => send(name)));
  }
}

/** Sends what waits for `name` now (the admin list does, so this isolate's latest requests are in it). */
export async function send(name: string): Promise<void> {
  const box = outboxes.get(name);
  if (!box) return;
  box.scheduled = false;
  if (!box.entries.length) return;
  const entries = box.entries;
  box.entries = [];
  const log = requestLog(box.env);
  if (!log) return;
  // Each row's columns as values (SQLite then parses no JSON), the record as its JSON text.
  const rows = entries.map((e) => rowOf(e.record));
  const captures = entries.flatMap((e, index) => (e.capture ? [{ index, capture: JSON.stringify(e.capture) }] : []));
  try {
    await log.add(rows, captures, box.retention);
    logStats.written += entries.length;
  } catch (e) {
    // The log is best effort: a batch that does not land is said in the Worker's log and counted.
    logStats.failedBatches++;
    logStats.dropped += entries.length;
    console.error(`[request-log] ${entries.length} requests were not logged: ${String(e instanceof Error ? e.message : e).slice(0, 200)}`);
  }
}

/** A record as the RequestLog stores it: its columns, then its JSON. */
function rowOf(r: DetailedRecord): LogRow {
  return [r.id, Date.parse(r.time), r.key, r.key_name, r.model, r.error !== null || r.status >= 400 ? 1 : 0, JSON.stringify(r)];
}
