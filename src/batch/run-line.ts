// One batch line run through the Worker's own app, in-process: the same middleware (the key read
// again, its limits, tokensPerDay reserved as the line starts, the request log) and the same
// pipeline as a client's request, in the batch class of the admission line (src/auth/batch-line.ts).
import { BATCH_LINE_ENV, BatchLineMark } from "../auth/batch-line.ts";
import type { BatchEndpoint } from "./batch-lines.ts";

/** The app's fetch (src/index.ts hands it to the batch Durable Object). */
export type Dispatch = (request: Request, env: Env, ctx: ExecutionContext) => Promise<Response>;

export type LineOutcome =
  /** An answer to write: 2xx to the output file, anything else to the error file. */
  | { kind: "answered"; status: number; requestId: string; body: unknown; usage: { input: number; output: number } }
  /** Not run now (no idle slot within the wait, the key's limits, a departed run): put back, tried again after `afterMs`. */
  | { kind: "later"; afterMs: number; code: string };

/** Refusals that pass with time: the line is put back rather than failed. */
const LATER_CODES = new Set(["no_capacity", "client_closed_request", "rate_limit_exceeded", "concurrency_limit_exceeded", "tokens_per_day_exceeded", "model_loading"]);

export interface LineRequest {
  endpoint: BatchEndpoint;
  body: Record<string, unknown>;
  mark: BatchLineMark;
  /** The request log's client id for the line (`<batch id>:<line>`), so the log shows it as a batch line. */
  clientId: string;
  /** Aborted when the batch is cancelled or expires: the line leaves the admission line, or stops generating. */
  signal: AbortSignal;
}

export async function runLine(dispatch: Dispatch, env: Env, ctx: ExecutionContext, line: LineRequest): Promise<LineOutcome> {
  // A batch answer is one body: a stream asked for by the line is answered whole.
  const body = { ...line.body, stream: false };
  const request = new Request(`https://batch.switchyard.internal${line.endpoint}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-client-request-id": line.clientId },
    body: JSON.stringify(body),
    signal: line.signal,
  });
  const res = await dispatch(request, { ...env, [BATCH_LINE_ENV]: line.mark } as Env, ctx);
  const text = await res.text();
  const requestId = res.headers.get("x-request-id") ?? "";
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { error: { message: text.slice(0, 2000), type: "server_error", code: "invalid_response", param: null } };
  }
  const error = errorOf(parsed);
  // A non-stream answer committed before its failure carries the error envelope under a 200.
  const status = res.status === 200 && error ? 502 : res.status;
  if (status >= 400 && ((error && LATER_CODES.has(error)) || status === 429 || status === 499)) {
    const retry = Number(res.headers.get("retry-after"));
    return { kind: "later", afterMs: Number.isFinite(retry) && retry > 0 ? Math.min(retry, 60) * 1000 : 1000, code: error ?? String(status) };
  }
  return { kind: "answered", status, requestId, body: parsed, usage: usageOf(parsed) };
}

/** The code of an error envelope (`{"error": {"code": …}}`), or null for an answer. */
function errorOf(body: unknown): string | null {
  if (!body || typeof body !== "object" || !("error" in body)) return null;
  const e = (body as { error: unknown }).error;
  if (!e || typeof e !== "object") return null;
  const code = (e as { code?: unknown }).code;
  return typeof code === "string" ? code : "error";
}

/** Input and output tokens of a chat, completion, Responses or embeddings body. */
function usageOf(body: unknown): { input: number; output: number } {
  const u = body && typeof body === "object" ? (body as { usage?: Record<string, unknown> }).usage : undefined;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  if (!u || typeof u !== "object") return { input: 0, output: 0 };
  return { input: n(u.prompt_tokens ?? u.input_tokens), output: n(u.completion_tokens ?? u.output_tokens) };
}
