// The request log for admins: GET /v1/admin/requests (the newest requests, filtered), GET
// /v1/admin/requests/{id} (one, with its detail and capture), GET /v1/admin/observability (counters).
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { requireAdmin } from "../auth/principal.ts";
import { loadConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { flush, logStats, requestLog, requestLogName } from "../observability/request-outbox.ts";
import { otlpStats } from "../observability/otlp-export.ts";
import { listItem, type DetailedRecord } from "../observability/request-record.ts";
import type { Capture } from "../observability/capture.ts";
import type { LogQuery } from "../observability/request-log.ts";
import { unauthenticatedMax } from "../observability/log-retention.ts";

/** How many requests one list answers at most, and by default. */
export const LIST_MAX = 1000;
export const LIST_DEFAULT = 100;

const NO_STORE = { "cache-control": "no-store" };

/** The log's Durable Object, with this isolate's finished requests sent first (so the list has them). */
async function openLog(c: Context<AppEnv>) {
  const config = loadConfig(c.env);
  if (!config.observability.log) {
    throw new ProxyError({ status: 404, code: "request_log_off", message: 'The request log is off: remove "log": false from "observability" in SWITCHYARD_CONFIG to keep it.' });
  }
  const log = requestLog(c.env);
  if (!log) throw new ProxyError({ status: 500, type: "server_error", code: "config_error", message: "The REQUEST_LOG Durable Object binding is missing from wrangler.toml." });
  await flush(requestLogName(c.env), (p) => c.executionCtx.waitUntil(p));
  return { log, maxAgeMs: config.observability.maxAgeMs };
}

/** The list's filters from the query: `limit`, `key` (id or name), `status=error`, `model`, `client_request_id`, `unauthenticated=true`. */
export function logQuery(url: URL): LogQuery {
  const q: LogQuery = { limit: LIST_DEFAULT };
  const limit = url.searchParams.get("limit");
  if (limit !== null) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1) throw new ProxyError({ status: 400, code: "invalid_value", param: "limit", message: `limit must be a whole number from 1 to ${LIST_MAX}; got "${limit.slice(0, 40)}".` });
    q.limit = Math.min(n, LIST_MAX);
  }
  const key = url.searchParams.get("key");
  if (key) q.key = key;
  const status = url.searchParams.get("status");
  if (status !== null) {
    if (status !== "error") throw new ProxyError({ status: 400, code: "invalid_value", param: "status", message: `status takes one value, "error" (requests whose client got an error); got "${status.slice(0, 40)}".` });
    q.errorsOnly = true;
  }
  const model = url.searchParams.get("model");
  if (model) q.model = model;
  const clientId = url.searchParams.get("client_request_id");
  if (clientId) q.clientRequestId = clientId;
  const pool = url.searchParams.get("unauthenticated");
  if (pool !== null) {
    if (pool !== "true" && pool !== "false") throw new ProxyError({ status: 400, code: "invalid_value", param: "unauthenticated", message: `unauthenticated takes "true" (the requests refused before a key was known, kept apart) or "false"; got "${pool.slice(0, 40)}".` });
    if (pool === "true") q.unauthenticated = true;
  }
  return q;
}

/** `GET /v1/admin/requests`: the newest requests first, `{data: [...]}`. */
export async function listRequests(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const query = logQuery(new URL(c.req.url));
  const { log, maxAgeMs } = await openLog(c);
  const rows = await log.list(query, maxAgeMs);
  return c.json({ data: rows.map((json) => listItem(JSON.parse(json) as DetailedRecord)) }, 200, NO_STORE);
}

/** `GET /v1/admin/requests/{id}`: one request with its detail (and its capture, when capture is on); 404 when unknown. */
export async function getRequest(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const id = c.req.param("id") ?? "";
  const { log, maxAgeMs } = await openLog(c);
  const found = await log.get(id, maxAgeMs);
  if (!found) throw new ProxyError({ status: 404, code: "request_not_found", param: "id", message: `No request "${id.slice(0, 128)}" in the request log: it is unknown, or older than the log keeps (observability.maxRecords, maxAgeMs).` });
  const record = JSON.parse(found.record) as DetailedRecord;
  return c.json(found.capture ? { ...record, capture: JSON.parse(found.capture) as Capture } : record, 200, NO_STORE);
}

/** `GET /v1/admin/observability`: the log's and the exporter's counters in this isolate, and what the log holds. */
export async function observabilityStatus(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const o = loadConfig(c.env).observability;
  const stored = o.log ? await requestLog(c.env)?.counts() : undefined;
  return c.json(
    {
      log: { enabled: o.log, capture: o.capture, max_records: o.maxRecords, max_unauthenticated: unauthenticatedMax(o.maxRecords), max_age_ms: o.maxAgeMs, stored: stored ?? null, written: logStats.written, dropped: logStats.dropped, failed_batches: logStats.failedBatches },
      otlp: o.otlp ? { endpoint: o.otlp.endpoint, exported: otlpStats.exported, dropped: otlpStats.dropped, failed_exports: otlpStats.failedExports, last_error: otlpStats.lastError } : null,
    },
    200,
    NO_STORE,
  );
}
