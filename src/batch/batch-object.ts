// The Batch object and its status machine as OpenAI documents them (docs/api.md, "Batches"), and the
// lines of its output and error files. Pure.
import type { BatchEndpoint, LineProblem } from "./batch-lines.ts";

export type BatchStatus = "validating" | "failed" | "in_progress" | "finalizing" | "completed" | "expired" | "cancelling" | "cancelled";

/** What moves a batch on: its file read, its lines all done, cancel, its window over, its files written. */
export type BatchEvent = "validated" | "invalid" | "drained" | "cancel" | "expire" | "written";

/** The statuses a batch ends in: nothing moves it any more. */
export const TERMINAL: ReadonlySet<BatchStatus> = new Set(["failed", "completed", "expired", "cancelled"]);

/**
 * The status after `event`, or null when the event does not apply (cancel of a finished batch, say).
 * validating → in_progress (some line valid) | failed (none); in_progress → finalizing (every line
 * done) | cancelling | finalizing-then-expired; cancelling → cancelled once its running lines end;
 * a window that runs out while validating or in progress ends `expired` once the files are written.
 */
export function nextStatus(status: BatchStatus, event: BatchEvent, expiring = false): BatchStatus | null {
  switch (status) {
    case "validating":
      if (event === "validated") return "in_progress";
      if (event === "invalid") return "failed";
      if (event === "cancel") return "cancelling";
      if (event === "expire") return "finalizing";
      return null;
    case "in_progress":
      if (event === "drained" || event === "expire") return "finalizing";
      if (event === "cancel") return "cancelling";
      return null;
    case "cancelling":
      return event === "drained" || event === "written" ? "cancelled" : null;
    case "finalizing":
      return event === "written" ? (expiring ? "expired" : "completed") : null;
    default:
      return null;
  }
}

export interface RequestCounts {
  total: number;
  completed: number;
  failed: number;
}

/** The Batch object, every field OpenAI's spec lists (the required ones always present; the others null until set). */
export interface Batch {
  id: string;
  object: "batch";
  endpoint: BatchEndpoint;
  model: string | null;
  errors: { object: "list"; data: Array<{ code: string; message: string; param: string | null; line: number | null }> } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: RequestCounts;
  usage: { input_tokens: number; input_tokens_details: { cached_tokens: number }; output_tokens: number; output_tokens_details: { reasoning_tokens: number }; total_tokens: number };
  metadata: Record<string, string> | null;
}

/** The timestamp field each status sets when a batch enters it. */
const STAMPS: Partial<Record<BatchStatus, keyof Batch>> = {
  in_progress: "in_progress_at",
  finalizing: "finalizing_at",
  completed: "completed_at",
  failed: "failed_at",
  expired: "expired_at",
  cancelling: "cancelling_at",
  cancelled: "cancelled_at",
};

/** `batch` moved on by `event` (unchanged when the event does not apply), its timestamp set. */
export function advance(batch: Batch, event: BatchEvent, nowS: number, expiring = false): Batch {
  const status = nextStatus(batch.status, event, expiring);
  if (status === null) return batch;
  const stamp = STAMPS[status];
  return { ...batch, status, ...(stamp ? { [stamp]: nowS } : {}) };
}

/** A completion window: OpenAI's `24h`, or a shorter `<n>s`, `<n>m` or `<n>h` (at least 1 s, at most 24 h); its length in seconds, or null. */
export function windowSeconds(window: unknown): number | null {
  if (typeof window !== "string") return null;
  const m = /^([1-9][0-9]{0,5})(s|m|h)$/.exec(window);
  if (!m) return null;
  const s = Number(m[1]) * (m[2] === "h" ? 3600 : m[2] === "m" ? 60 : 1);
  return s <= 24 * 3600 ? s : null;
}

/** A line of the output or error file: OpenAI's shape, `response` for a request that ran, `error` for one that did not. */
export interface ResultLine {
  id: string;
  custom_id: string | null;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string; line?: number; param?: string | null } | null;
}

export function answeredLine(id: string, customId: string, status: number, requestId: string, body: unknown): ResultLine {
  return { id, custom_id: customId, response: { status_code: status, request_id: requestId, body }, error: null };
}

export function problemLine(id: string, p: LineProblem): ResultLine {
  return { id, custom_id: p.customId, response: null, error: { code: p.code, message: p.message, line: p.line, param: p.param } };
}

/** A line that never ran because its batch ended first (`batch_expired`, `batch_cancelled`). */
export function unrunLine(id: string, customId: string, line: number, code: "batch_expired" | "batch_cancelled"): ResultLine {
  const message = code === "batch_expired" ? "This request could not be executed before the completion window expired." : "The batch was cancelled before this request ran.";
  return { id, custom_id: customId, response: null, error: { code, message, line } };
}
