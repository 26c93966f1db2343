// The request log's and the traces' view of each request to a generating endpoint: what the client got
// (status, headers, the answer's body or stream frames) read as it passes, then written after the
// response (ctx.waitUntil): the client's answer never waits on the log or the collector.
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { readCredential } from "../auth/credential.ts";
import type { Config } from "../config/config.ts";
import { loadConfig } from "../config/load-config.ts";
import { secretNames } from "../errors/redact-secrets.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { absorbJsonBody, absorbStreamEnds, emptyFacts, parseOutcomesHeader, type AnswerFacts } from "../observability/answer-facts.ts";
import { tapBody, textOf, type TappedBody } from "../observability/body-tap.ts";
import { assembleStream, boundedText, secretValues, type Capture } from "../observability/capture.ts";
import { keepOutbox, queueLogEntry } from "../observability/log-outbox.ts";
import { queueSpans } from "../observability/otlp-export.ts";
import { requestSpans } from "../observability/otlp-spans.ts";
import { recordOf, type DetailedRecord } from "../observability/request-record.ts";
import { attachTrace, RequestTrace } from "../observability/request-trace.ts";
import { parseTraceParent } from "../observability/trace-context.ts";

/** The generating endpoints, by the path a client uses, and the name the log gives each. */
const ENDPOINTS = new Map([
  ["/v1/chat/completions", "/v1/chat/completions"],
  ["/chat/completions", "/v1/chat/completions"],
  ["/v1/completions", "/v1/completions"],
  ["/v1/responses", "/v1/responses"],
  ["/v1/responses/compact", "/v1/responses/compact"],
  ["/v1/messages", "/v1/messages"],
  ["/v1/embeddings", "/v1/embeddings"],
]);

/** What is kept of a streamed answer to read its facts: its first and last bytes (a committed JSON body whole, up to a bound). */
const HEAD_BYTES = 16 * 1024;
const TAIL_BYTES = 64 * 1024;
const JSON_BYTES = 1024 * 1024;
/** A captured stream is kept up to this many times the capture bound (frames are larger than their text). */
const CAPTURE_STREAM_FACTOR = 8;

/** An answer's first data: an error frame (or a committed body's error envelope) carries no model of its own. */
const ERROR_FRAME = /^(?::[^\n]*\n\n|\s)*(?:data: \{"error"|\{"error"|event: error|event: response\.failed)/;

/** The middleware: records each request to a generating endpoint once its answer ended. */
export function observeRequests(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const endpoint = c.req.method === "POST" ? ENDPOINTS.get(c.req.path) : undefined;
    if (!endpoint) return next();
    const config = configOf(c.env);
    if (!config) return next(); // an invalid configuration: the route answers its config_error
    const o = config.observability;
    if (!o.log && !o.otlp) return next();
    const arrivedAt = Date.now();
    const raw = c.req.raw;
    const trace = o.otlp ? new RequestTrace(parseTraceParent(raw.headers.get("traceparent"))) : undefined;
    if (trace) attachTrace(raw, trace);
    // The body as the client sent it: to capture it, a copy taken before the route reads it; otherwise
    // the bytes the route read, by reference, for an answer that does not say its model (an error).
    const capture = o.log && o.capture;
    // (A body without a declared length is read as a stream by the route: a copy then, too.)
    const whole = raw.headers.has("content-length");
    let copy: Request | undefined = (capture || !whole) && raw.body ? raw.clone() : undefined;
    const readByRoute = copy ? undefined : watchBodyRead(raw);
    /** The answer names its model: the request is not needed (unless captured). */
    const release = () => {
      readByRoute?.release();
      if (!copy || capture) return;
      copy.body?.cancel().catch(() => {});
      copy = undefined;
    };

    await next();

    const defer = deferrer(c);
    const res = c.res;
    const type = res.headers.get("content-type") ?? "";
    const sse = type.startsWith("text/event-stream");
    // A committed non-stream body (whitespace heartbeats first) is streamed too: tap it rather than copy it.
    const streamed = sse || res.headers.get("content-encoding") === "identity";
    let body: Promise<{ text: string; tapped?: TappedBody; head?: string }>;
    let firstIsError = false;
    if (res.body && streamed && res.status === 200) {
      const tap = tapBody(res.body, {
        headBytes: HEAD_BYTES,
        tailBytes: sse ? TAIL_BYTES : JSON_BYTES,
        keepBytes: capture ? o.captureMaxBytes * CAPTURE_STREAM_FACTOR : 0,
        onFirstData(chunk) {
          firstIsError = ERROR_FRAME.test(new TextDecoder().decode(chunk.subarray(0, 256)));
          // The stream's frames name its model: the request's bytes are not needed any longer.
          if (!firstIsError) release();
        },
      });
      // Hono copies the old response's headers into a new one; this one has them already.
      c.res = undefined;
      c.res = new Response(tap.readable, res);
      // While this stream runs, its waitUntil also sends the log's batches (keepOutbox).
      if (o.log) defer(keepOutbox(tap.done, defer));
      body = tap.done.then((tapped) => {
        const text = textOf(tapped.tail);
        return { tapped, text, head: tapped.bytes > TAIL_BYTES ? textOf(tapped.head) : text };
      });
    } else {
      if (res.status === 200) release();
      const endedAt = Date.now();
      body = res.body ? res.clone().text().then((text) => ({ text })) : Promise.resolve({ text: "" });
      body = body.then((b) => ({ ...b, tapped: { firstDataAt: undefined, endedAt, how: "closed", bytes: b.text.length, head: [], tail: [], all: undefined, kept: true } }));
    }

    const principal = c.get("principal");
    const unauthenticated = !principal && (res.status === 401 || res.status === 429);
    defer(
      (async () => {
        const got = await body;
        const tapped = got.tapped!;
        const answer: AnswerFacts = emptyFacts();
        if (sse) absorbStreamEnds(answer, got.head ?? got.text, got.text, tapped.bytes <= TAIL_BYTES);
        else absorbJsonBody(answer, got.text);
        // An answer with a model of its own needs nothing of the request, unless it is captured.
        const readBack = readByRoute?.bytes();
        const source = copy ?? (readBack && (answer.model === undefined || res.status >= 400) ? new Request(raw.url, { method: "POST", headers: raw.headers, body: readBack }) : undefined);
        const request = source && !unauthenticated ? await readRequest(source, config) : undefined;
        const record = recordOf({
          id: c.get("requestId"),
          arrivedAt,
          key: principal ? { id: principal.id, name: principal.name } : null,
          endpoint,
          ...(typeof request?.body?.model === "string" ? { model: request.body.model } : {}),
          ...(request?.body ? { stream: request.body.stream === true } : {}),
          status: res.status,
          target: res.headers.get("x-switchyard-target"),
          attempts: numberOr(res.headers.get("x-switchyard-attempts")),
          outcomes: parseOutcomesHeader(res.headers.get("x-switchyard-outcomes")),
          answer,
          sse,
          firstDataAt: firstIsError ? undefined : tapped.firstDataAt,
          endedAt: tapped.endedAt,
          cancelled: tapped.how === "cancelled",
        });
        if (o.log) {
          const captured = capture ? captureOf(c, config, request?.text, sse ? tapped : undefined, got.text) : undefined;
          queueLogEntry(c.env, { record, ...(captured ? { capture: captured } : {}) }, { maxRecords: o.maxRecords, maxAgeMs: o.maxAgeMs, captureMaxRecords: o.captureMaxRecords }, defer);
        }
        if (o.otlp && trace?.sampled) exportTrace(c, config, record, trace, arrivedAt, defer);
      })().catch((e: unknown) => console.error(`[request-log] ${c.get("requestId")}: ${String(e instanceof Error ? e.stack : e).slice(0, 500)}`)),
    );
  };
}

// The configuration this middleware last loaded, by its inputs: the route loads it again, and each
// load costs a key string and the secrets' names, per request.
let memo: { raw: unknown; llamaUrl: unknown; mode: unknown; config: Config | null } | undefined;

/** The configuration, or null while it is invalid. */
function configOf(env: Env): Config | null {
  if (memo && memo.raw === env.SWITCHYARD_CONFIG && memo.llamaUrl === env.LLAMA_URL && memo.mode === env.SWITCHYARD_ENV) return memo.config;
  let config: Config | null = null;
  try {
    config = loadConfig(env);
  } catch {}
  memo = { raw: env.SWITCHYARD_CONFIG, llamaUrl: env.LLAMA_URL, mode: env.SWITCHYARD_ENV, config };
  return config;
}

/**
 * The bytes the route reads with `request.arrayBuffer()` (readJsonBody does, when the client declared
 * a length), kept by reference: no copy, and nothing read that the route did not read.
 */
function watchBodyRead(request: Request): { bytes(): ArrayBuffer | undefined; release(): void } {
  let seen: ArrayBuffer | undefined;
  let released = false;
  const read = request.arrayBuffer;
  try {
    Object.defineProperty(request, "arrayBuffer", {
      configurable: true,
      value: () =>
        read.call(request).then((bytes) => {
          if (!released) seen = bytes;
          return bytes;
        }),
    });
  } catch {
    released = true;
  }
  return {
    bytes: () => seen,
    release() {
      released = true;
      seen = undefined;
    },
  };
}

/** ctx.waitUntil, where the runtime gives one (every request in the Worker; a test may call the app without). */
function deferrer(c: Context<AppEnv>): (p: Promise<unknown>) => void {
  try {
    const ctx = c.executionCtx;
    return (p) => ctx.waitUntil(p);
  } catch {
    return (p) => void p.catch(() => {});
  }
}

const numberOr = (v: string | null): number | null => (v !== null && v !== "" && Number.isFinite(Number(v)) ? Number(v) : null);

/** The request body as sent (bounded like the route's read), or nothing when it cannot be read. */
async function readRequest(copy: Request, config: Config): Promise<{ body: Record<string, unknown> | undefined; text: string } | undefined> {
  try {
    const body = await readJsonBody(copy, config.limits.maxBodyBytes);
    const record = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined;
    return { body: record, text: JSON.stringify(body) };
  } catch {
    return undefined;
  }
}

/** The request and its answer as captured: redacted, bounded, a stream's answer assembled. */
function captureOf(c: Context<AppEnv>, config: Config, requestText: string | undefined, tapped: TappedBody | undefined, bodyText: string): Capture {
  const o = config.observability;
  const credential = readCredential(c.req.raw.headers);
  const names = [...secretNames(config), ...(o.otlp?.apiKeySecret ? [o.otlp.apiKeySecret] : [])];
  const secrets = secretValues(c.env, names, credential.kind === "key" ? credential.value : undefined);
  const request = boundedText(requestText ?? "", secrets, o.captureMaxBytes);
  const answer = tapped?.all ? JSON.stringify(assembleStream(textOf(tapped.all))) : bodyText.trim();
  const response = boundedText(answer, secrets, o.captureMaxBytes);
  return { request: request.text, response: response.text, truncated: request.truncated || response.truncated || (tapped !== undefined && !tapped.kept) };
}

/** The request's spans to the collector, with the collector's key from its secret. */
function exportTrace(c: Context<AppEnv>, config: Config, record: DetailedRecord, trace: RequestTrace, arrivedAt: number, defer: (p: Promise<unknown>) => void): void {
  const otlp = config.observability.otlp!;
  const key = otlp.apiKeySecret ? c.env[otlp.apiKeySecret] : undefined;
  const headers = typeof key === "string" && key !== "" ? { ...otlp.headers, authorization: `Bearer ${key}` } : otlp.headers;
  const spans = requestSpans(record, { traceId: trace.traceId, spanId: trace.spanId, ...(trace.parentSpanId ? { parentSpanId: trace.parentSpanId } : {}) }, arrivedAt, trace.attempts);
  queueSpans({ endpoint: otlp.endpoint, headers, timeoutMs: otlp.timeoutMs }, spans, defer);
}
