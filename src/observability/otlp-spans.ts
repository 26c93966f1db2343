// A finished request as OpenTelemetry spans in OTLP/JSON, with the GenAI semantic conventions: one
// SERVER span for the request and one CLIENT span per upstream attempt (pure). A span is made as one
// plain object and written straight to its OTLP/JSON text: OTLP's shape (an object per attribute and
// per value) built per request and then serialized cost more CPU than the rest of the request log.
import type { DetailedRecord } from "./request-record.ts";
import type { AttemptSpan } from "./request-trace.ts";
import { newSpanId } from "./trace-context.ts";

/** OTLP's span kinds and status codes (opentelemetry-proto trace.proto). */
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;

type AttrValue = string | number | boolean | string[];
/** A span's attributes as made: a value of null or undefined leaves the attribute out. */
export type SpanAttributes = Record<string, AttrValue | null | undefined>;

/** The OTLP/JSON wire form of an attribute and a span (what spanJson writes; tests read it back). */
export interface OtlpAttribute {
  key: string;
  value: { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean } | { arrayValue: { values: Array<{ stringValue: string }> } };
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  status: { code: number; message?: string };
}

/** A span as made: times in epoch milliseconds, attributes as a plain record. */
export interface SpanData {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  attributes: SpanAttributes;
  status: { code: number; message?: string };
}

/** The GenAI operation of an endpoint (gen_ai.operation.name). */
export function operationOf(endpoint: string): string {
  if (endpoint.endsWith("/embeddings")) return "embeddings";
  if (endpoint.endsWith("/completions") && !endpoint.endsWith("/chat/completions")) return "text_completion";
  return "chat";
}

const str = JSON.stringify;

// An attribute's key as OTLP/JSON text, with what follows it up to its value: made once per key (the
// keys are a fixed set of the code's) rather than by a JSON.stringify per attribute of every span
// (bench/overhead/span-encoding.mjs: a batch's spans in 0.82 of the time).
const keyHeads = new Map<string, string>();
const KEY_HEADS_MAX = 256;
function keyHead(k: string): string {
  let head = keyHeads.get(k);
  if (head === undefined) {
    if (keyHeads.size >= KEY_HEADS_MAX) keyHeads.clear();
    keyHeads.set(k, (head = `{"key":${str(k)},"value":`));
  }
  return head;
}

/** One attribute's OTLP/JSON value (AnyValue): integers as decimal strings, as OTLP/JSON has them. */
function valueJson(v: AttrValue): string {
  if (typeof v === "string") return `{"stringValue":${str(v)}}`;
  if (typeof v === "number") return Number.isInteger(v) ? `{"intValue":"${v}"}` : Number.isFinite(v) ? `{"doubleValue":${v}}` : `{"stringValue":"${v}"}`;
  if (typeof v === "boolean") return v ? `{"boolValue":true}` : `{"boolValue":false}`;
  let out = "";
  for (const s of v) out += `${out ? "," : ""}{"stringValue":${str(s)}}`;
  return `{"arrayValue":{"values":[${out}]}}`;
}

/** Attributes in OTLP/JSON (KeyValue list), those without a value left out. */
function attributesJson(attrs: SpanAttributes): string {
  let out = "";
  for (const k in attrs) {
    const v = attrs[k];
    if (v !== null && v !== undefined) out += `${out ? "," : ""}${keyHead(k)}${valueJson(v)}}`;
  }
  return `[${out}]`;
}

/** A span's OTLP/JSON text (one element of ScopeSpans.spans). */
export function spanJson(s: SpanData): string {
  const parent = s.parentSpanId ? `,"parentSpanId":"${s.parentSpanId}"` : "";
  const status = s.status.message !== undefined ? `{"code":${s.status.code},"message":${str(s.status.message)}}` : `{"code":${s.status.code}}`;
  return `{"traceId":"${s.traceId}","spanId":"${s.spanId}"${parent},"name":${str(s.name)},"kind":${s.kind},"startTimeUnixNano":"${nanos(s.startMs)}","endTimeUnixNano":"${nanos(s.endMs)}","attributes":${attributesJson(s.attributes)},"status":${status}}`;
}

const nanos = (ms: number): string => `${Math.round(ms)}000000`;

type Server = { address: string; port?: number } | null;

// A deployment has a handful of targets: each one's address is parsed once, not per attempt span.
const servers = new Map<string, Server>();
const SERVERS_MAX = 256;

/** `host` and `port` of a target's URL, or of a client-facing name `llama:host:port`. */
export function serverOf(target: string, url?: string): Server {
  const from = url ?? (/^[a-z]+:\/\//.test(target) ? target : /^(llama|openai):/.test(target) ? `http://${target.slice(target.indexOf(":") + 1)}` : undefined);
  if (!from) return null;
  let server = servers.get(from);
  if (server === undefined) {
    server = parseServer(from);
    if (servers.size >= SERVERS_MAX) servers.clear();
    servers.set(from, server);
  }
  return server;
}

function parseServer(from: string): Server {
  if (!URL.canParse(from)) return null;
  const u = new URL(from);
  const port = u.port ? Number(u.port) : u.protocol === "https:" ? 443 : 80;
  return { address: u.hostname.replace(/^\[|\]$/g, ""), port };
}

export interface TraceIds {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
}

/**
 * The request's spans. `attempts`: what routing reported (exact); when it reported none, one span per
 * attempt the answer counted (`x-switchyard-attempts`), its server from the answering target or the
 * failed targets' outcomes, and its times estimated within the request (marked
 * `switchyard.attempt.estimated`).
 */
export function requestSpans(r: DetailedRecord, ids: TraceIds, arrivedAt: number, attempts: readonly AttemptSpan[]): SpanData[] {
  const endedAt = arrivedAt + (r.duration_ms ?? 0);
  const operation = operationOf(r.endpoint);
  const model = r.model ?? "unknown";
  const failed = r.status >= 500 || (r.status === 200 && r.error !== null && r.error !== "client_closed_request");
  const server: SpanData = {
    traceId: ids.traceId,
    spanId: ids.spanId,
    ...(ids.parentSpanId ? { parentSpanId: ids.parentSpanId } : {}),
    name: `${operation} ${model}`,
    kind: SPAN_KIND_SERVER,
    startMs: arrivedAt,
    endMs: endedAt,
    attributes: {
      "gen_ai.operation.name": operation,
      "gen_ai.request.model": r.model,
      "gen_ai.response.model": r.model,
      "gen_ai.usage.input_tokens": r.prompt_tokens,
      "gen_ai.usage.output_tokens": r.completion_tokens,
      "gen_ai.response.finish_reasons": r.finish_reasons.length ? r.finish_reasons : null,
      "gen_ai.request.stream": r.stream,
      "http.request.method": "POST",
      "http.route": r.endpoint,
      "http.response.status_code": r.status,
      "error.type": r.error,
      "switchyard.request_id": r.id,
      "switchyard.key_id": r.key,
      "switchyard.target": r.target,
      "switchyard.attempts": r.attempts,
      "switchyard.ttft_ms": r.ttft_ms,
    },
    // A 5xx, or an error the stream ended with after its 200: the request failed on our side.
    status: failed ? { code: STATUS_ERROR, message: r.error ?? `HTTP ${r.status}` } : { code: STATUS_UNSET },
  };
  const tries = attempts.length ? attempts : estimatedAttempts(r, arrivedAt, endedAt);
  const children = tries.map((a): SpanData => {
    const where = serverOf(a.target, a.url);
    const outcome = a.outcome ?? "ok";
    return {
      traceId: ids.traceId,
      spanId: a.spanId,
      parentSpanId: ids.spanId,
      name: `${operation} ${model}`,
      kind: SPAN_KIND_CLIENT,
      startMs: a.startedAt,
      endMs: a.endedAt ?? endedAt,
      attributes: {
        "gen_ai.operation.name": operation,
        "gen_ai.request.model": r.model,
        "server.address": where?.address ?? a.target,
        "server.port": where?.port,
        "switchyard.target": a.target,
        "error.type": outcome === "ok" ? null : outcome,
        "switchyard.attempt.estimated": attempts.length ? null : true,
      },
      status: outcome === "ok" ? { code: STATUS_UNSET } : { code: STATUS_ERROR, message: outcome },
    };
  });
  return [server, ...children];
}

/**
 * The attempts an answer counted, without routing's report: the answering target's (from its
 * `x_switchyard.timings`) last; before it, the failed targets named by the outcomes, then the
 * remaining tries as retries of the first failed target (or of the answering one). The time before the
 * answering attempt is shared among the others.
 */
export function estimatedAttempts(r: DetailedRecord, arrivedAt: number, endedAt: number): AttemptSpan[] {
  const n = Math.max(0, r.attempts ?? 0);
  if (n === 0) return [];
  const served = r.status < 400 && r.target !== null && r.error === null ? r.target : null;
  const lastStart = served && r.timings?.total_ms !== undefined ? Math.max(arrivedAt, endedAt - r.timings.total_ms) : served ? arrivedAt : endedAt;
  const failedCount = served ? n - 1 : n;
  const failed: Array<{ target: string; code: string }> = r.outcomes.slice(0, failedCount);
  const filler = r.outcomes[0]?.target ?? served ?? r.target ?? "unknown";
  while (failed.length < failedCount) failed.unshift({ target: filler, code: r.outcomes[0]?.code || "retried" });
  const share = failed.length ? (lastStart - arrivedAt) / failed.length : 0;
  const spans: AttemptSpan[] = failed.map((f, i) => ({ spanId: newSpanId(), target: f.target, startedAt: arrivedAt + i * share, endedAt: arrivedAt + (i + 1) * share, outcome: f.code || "error" }));
  if (served) spans.push({ spanId: newSpanId(), target: served, startedAt: lastStart, endedAt, outcome: "ok" });
  return spans;
}

/** What an OTLP/HTTP JSON export body (ExportTraceServiceRequest) holds around its spans, comma-separated. */
export function exportEnvelope(service = { name: "switchyard", version: "0.1.0" }): { head: string; tail: string } {
  const resource = attributesJson({ "service.name": service.name, "service.version": service.version, "telemetry.sdk.name": "switchyard", "telemetry.sdk.language": "javascript" });
  return { head: `{"resourceSpans":[{"resource":{"attributes":${resource}},"scopeSpans":[{"scope":{"name":"switchyard","version":${str(service.version)}},"spans":[`, tail: "]}]}]}" };
}
