// The request log's and the traces' view of each request to a generating endpoint: the status and
// headers the client got, and what the pipeline told of the answer (RunFacts), written after the
// response (ctx.waitUntil): the client's answer never waits on the log or the collector.
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { readCredential } from "../auth/credential.ts";
import type { Config } from "../config/config.ts";
import { loadConfig } from "../config/load-config.ts";
import { secretNames } from "../errors/redact-secrets.ts";
import { HealthRecorder } from "../health/health-client.ts";
import { parseJsonText, readBodyText } from "../http/read-json-body.ts";
import { absorbJsonBody, emptyFacts, parseOutcomesHeader, type AnswerFacts } from "../observability/answer-facts.ts";
import { boundedText, CAPTURE_HEADER, secretValues, type Capture } from "../observability/capture.ts";
import { queueFinished, type Destinations } from "../observability/request-outbox.ts";
import { RequestTrace } from "../observability/request-trace.ts";
import { RunFacts } from "../observability/run-facts.ts";
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

/** An error body is read for its code only up to this size (error envelopes are a few hundred bytes). */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * The middleware: records each request to a generating endpoint once its answer ended. What the
 * answer was (usage, finish, first token, end, Switchyard's extension) comes from the pipeline as its
 * events pass (RunFacts, RequestScope.facts); the body the client gets is not read again, except an
 * error envelope answered without a run (its code), and with capture on, a non-stream body.
 * Capture is on from the start with `observability.capture`, or turned on by the route once it knows
 * the caller's key has `capture` (readRequestBody); either way the response says so (`x-switchyard-capture: on`).
 */
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
    if (trace) c.set("trace", trace);
    const bound = o.log ? o.captureMaxBytes * CAPTURE_CHARS_PER_BYTE : 0;
    const everyRequest = o.log && o.capture;
    const facts = new RunFacts(everyRequest ? bound : 0, bound);
    c.set("facts", facts);
    // Capture of every request keeps it as the client sent it: a copy taken before the route reads it
    // (a request refused before its route read the body is captured too). A key's capture, decided
    // once the key is known, keeps the body its route parsed instead (RunFacts.captureKeyed), or the
    // body read after the response when its route never read it.
    const copy = everyRequest && raw.body ? raw.clone() : undefined;

    await next();

    let res = c.res;
    const defer = deferrer(c);
    const principal = c.get("principal");
    // A key's request refused before its route read the body (its limits' 429) has it still unread:
    // captured as sent, like the requests its route read.
    const unread = principal?.capture === true && facts.keyCapturable && !raw.bodyUsed;
    if (unread) facts.captureKeyed();
    // Refused before a key was known (no key, a bad one, the address guard's 429): its row goes to
    // the log's small pool of its own and it exports no span, so a flood of them cannot evict or
    // crowd out keyed requests; /metrics counts them.
    const unauthenticated = !principal && (res.status === 401 || res.status === 403 || res.status === 429);
    const capture = facts.capturing && !unauthenticated;
    // The key holder is told, on the response itself, that this request's body and answer are kept
    // (a response whose headers are immutable, one passed on as fetched, is re-wrapped first).
    if (capture) {
      try {
        res.headers.set(CAPTURE_HEADER, "on");
      } catch {
        c.res = res = new Response(res.body, res);
        res.headers.set(CAPTURE_HEADER, "on");
      }
    }
    // Read now, while the response is whole: an error envelope's code (no run told it), a captured non-stream body.
    const errorBody = !facts.ran && res.status >= 400 && res.body && Number(res.headers.get("content-length") ?? 0) <= ERROR_BODY_BYTES ? res.clone().text() : undefined;
    const sse = (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
    const capturedBody = capture && !sse && res.body ? res.clone().text() : undefined;

    /**
     * The request handed to the outbox once its answer has ended (`toldError`: what an error body
     * said): only what the response's end tells is read here; its record and spans are built in the
     * outbox's batch.
     */
    const finish = (toldError?: string, captured?: Capture) => {
      // Refused before a key was known: counted in /metrics (target "none", by the code the client got), whatever their number.
      if (unauthenticated) new HealthRecorder(c.env, config, [], defer).finish({ target: "none", code: toldError ?? `http_${res.status}`, totalMs: Date.now() - arrivedAt });
      // A delivered answer's extension names its target and attempts; otherwise the headers do.
      const x = facts.extension;
      queueFinished(
        c.env,
        {
          request: {
            id: c.get("requestId"),
            ...(c.get("clientRequestId") !== undefined ? { clientRequestId: c.get("clientRequestId") } : {}),
            ...(unauthenticated ? { unauthenticated } : {}),
            arrivedAt,
            key: principal ? { id: principal.id, name: principal.name } : null,
            endpoint,
            model: unauthenticated ? undefined : facts.model,
            stream: facts.stream,
            status: res.status,
            target: x ? x.target ?? null : res.headers.get("x-switchyard-target"),
            attempts: x ? x.attempts ?? null : numberOr(res.headers.get("x-switchyard-attempts")),
            outcomes: x ? [] : parseOutcomesHeader(res.headers.get("x-switchyard-outcomes")),
            sse,
            firstTokenAt: facts.firstTokenAt,
            endedAt: facts.endedAt ?? Date.now(),
            cancelled: facts.cancelled,
          },
          answer: facts,
          ...(toldError !== undefined ? { toldError } : {}),
          ...(captured ? { capture: captured } : {}),
          ...(trace?.sampled ? { trace } : {}),
          to: destinationsOf(c.env, config),
        },
        defer,
      );
    };
    const failed = (e: unknown) => console.error(`[request-log] ${c.get("requestId")}: ${String(e instanceof Error ? e.stack : e).slice(0, 500)}`);

    if (!errorBody && !capture) {
      // The common case: nothing to read. The answer's end comes from its responder, whose own work
      // (the stream's pump) keeps the request alive until then: no waitUntil of our own.
      const finished = () => {
        try {
          finish();
        } catch (e) {
          failed(e);
        }
      };
      if (facts.ran) facts.whenEnded(finished);
      else finished();
      return;
    }
    defer(
      (async () => {
        if (facts.ran) await new Promise<void>((r) => facts.whenEnded(r));
        let told: AnswerFacts | undefined;
        if (errorBody) absorbJsonBody((told = emptyFacts()), await errorBody.catch(() => ""));
        finish(told?.error, capture ? await captureOf(c, config, copy ? readRequest(copy, config) : unread ? readRequest(raw, config) : facts.keyedRequest, facts, capturedBody) : undefined);
      })().catch(failed),
    );
  };
}

/** The assembled answer is kept up to this many characters per part before the byte bound cuts the whole (a character is at most 4 bytes; most are 1). */
const CAPTURE_CHARS_PER_BYTE = 1;

/** The configuration, or null while it is invalid (the route then answers its config_error). */
function configOf(env: Env): Config | null {
  try {
    return loadConfig(env);
  } catch {
    return null;
  }
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

/**
 * The request body as sent (bounded like the route's read, decoded): its JSON, or its text when it is
 * not JSON; nothing when it cannot be read (over the bound, an unknown coding, not UTF-8).
 */
async function readRequest(copy: Request, config: Config): Promise<string | undefined> {
  let text: string;
  try {
    text = await readBodyText(copy, config.limits.maxBodyBytes);
  } catch {
    return undefined;
  }
  try {
    return JSON.stringify(parseJsonText(text));
  } catch {
    return text;
  }
}

/** The request and its answer as captured: redacted, bounded; a stream's answer assembled from its events. */
async function captureOf(c: Context<AppEnv>, config: Config, sent: Promise<string | undefined> | string | undefined, facts: RunFacts, body: Promise<string> | undefined): Promise<Capture> {
  const o = config.observability;
  const credential = readCredential(c.req.raw.headers);
  const secrets = [...secretValues(c.env, secretNames(config), credential.kind === "key" ? credential.value : undefined), ...config.secrets.values];
  const requestText = await sent;
  const request = boundedText(requestText ?? "", secrets, o.captureMaxBytes);
  const assembled = facts.assembled();
  const answer = body ? (await body.catch(() => "")).trim() : assembled ? JSON.stringify(assembled) : "";
  const response = boundedText(answer, secrets, o.captureMaxBytes);
  return { request: request.text, response: response.text, truncated: request.truncated || response.truncated || (!body && facts.cut) };
}

/** Where a configuration's finished requests go, made once per configuration (the collector's key from its secret). */
const destinations = new WeakMap<Config, { key: unknown; to: Destinations }>();
function destinationsOf(env: Env, config: Config): Destinations {
  const o = config.observability;
  const key = o.otlp?.apiKeySecret ? env[o.otlp.apiKeySecret] : undefined;
  const known = destinations.get(config);
  if (known && known.key === key) return known.to;
  const headers = o.otlp && typeof key === "string" && key !== "" ? { ...o.otlp.headers, authorization: `Bearer ${key}` } : o.otlp?.headers;
  const to: Destinations = {
    log: o.log ? { maxRecords: o.maxRecords, maxAgeMs: o.maxAgeMs, captureMaxRecords: o.captureMaxRecords } : null,
    otlp: o.otlp ? { endpoint: o.otlp.endpoint, headers: headers ?? {}, timeoutMs: o.otlp.timeoutMs } : null,
  };
  destinations.set(config, { key, to });
  return to;
}
