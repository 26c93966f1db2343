// One request as the request log keeps it (GET /v1/admin/requests): the fields the contract names,
// made from what the client got, and the detail `GET /v1/admin/requests/{id}` adds (pure).
import type { AnswerFacts } from "./answer-facts.ts";

/** A request log entry: exactly the fields of the contract (docs/api.md, "Request log"). */
export interface RequestRecord {
  /** The `x-request-id` the client got: Switchyard's own, always. */
  id: string;
  /** The id the client sent (`x-client-request-id`, or `x-request-id`), or null. */
  client_request_id: string | null;
  /** When the request arrived (ISO 8601, UTC). */
  time: string;
  /** The key's id; null without one (open mode, or refused before a key was known). */
  key: string | null;
  endpoint: string;
  model: string | null;
  stream: boolean | null;
  /** The HTTP status the client got (200 for a stream that ended in an error frame). */
  status: number;
  /** The error code the client got (an error body's or a stream's error frame's), or null. */
  error: string | null;
  target: string | null;
  attempts: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** From the request's arrival to its first token (text, reasoning or a tool call) leaving the pipeline for the client's encoder. */
  ttft_ms: number | null;
  /** From the request's arrival to the answer's end (its last event), or to the response when no answer ran. */
  duration_ms: number | null;
}

export const RECORD_FIELDS = ["id", "client_request_id", "time", "key", "endpoint", "model", "stream", "status", "error", "target", "attempts", "prompt_tokens", "completion_tokens", "ttft_ms", "duration_ms"] as const;

/** What `GET /v1/admin/requests/{id}` adds to the record. */
export interface RecordDetail {
  key_name: string | null;
  finish_reasons: string[];
  /** Each target's last failure, in the order tried, when no target served the request. */
  outcomes: Array<{ target: string; code: string }>;
  /** Where the answer was continued after its upstream failed mid-answer. */
  resumes: Array<{ from: string; to: string; code: string }>;
  /** `x_switchyard.timings` of the answering attempt: its first event and total, from its start. */
  timings: { first_event_ms?: number; total_ms?: number } | null;
  tool_calls: unknown[] | null;
}

export type DetailedRecord = RequestRecord & RecordDetail;

/** What the middleware knows of a request besides its answer. */
export interface RequestFacts {
  id: string;
  /** The id the client sent, when it sent a valid one. */
  clientRequestId?: string;
  /** Refused before a key was known (401, 403, 429 with no key): the log's unauthenticated pool, no spans. */
  unauthenticated?: boolean;
  arrivedAt: number;
  key: { id: string; name: string } | null;
  endpoint: string;
  /** From the request body, when it was read (an error answer carries no model). */
  model?: string;
  stream?: boolean;
  status: number;
  /** Response headers: x-switchyard-target, -attempts, -outcomes. */
  target: string | null;
  attempts: number | null;
  outcomes: Array<{ target: string; code: string }>;
  /** The body was a stream of SSE frames. */
  sse: boolean;
  /** When the answer's first token (text, reasoning or a tool call) passed on its way to the client. */
  firstTokenAt: number | undefined;
  endedAt: number;
  /** The client left before the answer's end. */
  cancelled: boolean;
}

/** The log entry of a finished request, `answer` being its answer as the client got it (pure). */
export function recordOf(f: RequestFacts, answer: AnswerFacts): DetailedRecord {
  const x = answer.extension;
  const duration = Math.max(0, f.endedAt - f.arrivedAt);
  const ttft = f.firstTokenAt !== undefined ? Math.max(0, f.firstTokenAt - f.arrivedAt) : null;
  const error = answer.error ?? (f.cancelled ? "client_closed_request" : f.status >= 400 ? `http_${f.status}` : null);
  return {
    id: f.id,
    client_request_id: f.clientRequestId ?? null,
    time: new Date(f.arrivedAt).toISOString(),
    key: f.key?.id ?? null,
    endpoint: f.endpoint,
    model: answer.model ?? f.model ?? null,
    stream: f.stream ?? (f.sse ? true : f.status < 400 ? false : null),
    status: f.status,
    error,
    target: x?.target ?? (f.target || null),
    attempts: x?.attempts ?? f.attempts,
    prompt_tokens: answer.promptTokens ?? null,
    completion_tokens: answer.completionTokens ?? null,
    ttft_ms: ttft,
    duration_ms: duration,
    key_name: f.key?.name ?? null,
    finish_reasons: answer.finishReasons,
    outcomes: x?.outcomes?.length ? x.outcomes : f.outcomes,
    resumes: (x?.resumes ?? []).map(({ from, to, code }) => ({ from, to, code })),
    timings: x?.timings ?? null,
    tool_calls: x?.tool_calls ?? null,
  };
}

/** The list's view of a record: the contract's fields only, in its order. */
export function listItem(r: DetailedRecord): RequestRecord {
  const out = {} as Record<string, unknown>;
  for (const k of RECORD_FIELDS) out[k] = r[k];
  return out as unknown as RequestRecord;
}
