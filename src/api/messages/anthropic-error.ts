// Errors in the shape and wording of Anthropic's Messages API, so Anthropic clients (Claude Code)
// read Switchyard's errors as they read Anthropic's: its error types, "prompt is too long".
import { attemptHeaders } from "../../errors/error-envelope.ts";
import type { ErrorInfo, ProxyError } from "../../errors/proxy-error.ts";
import { parseContextLengthMessage } from "../../errors/context-length.ts";
import type { ErrorResponse } from "../wire/anthropic-wire.ts";

/** Anthropic's error type for a status (its documented set; 503 is how it says "overloaded"). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
    case 405:
    case 422:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    case 504:
      return "timeout_error";
    default:
      return status >= 400 && status < 500 ? "invalid_request_error" : "api_error";
  }
}

/**
 * Anthropic's error body (ErrorResponse of its SDK's types) with `error.code`, Switchyard's addition;
 * `request_id` is the `x-request-id` (null when unknown). `error.type` is a string: Anthropic also
 * answers `request_too_large` (413), which its SDK's union leaves out.
 */
export type AnthropicErrorBody = Omit<ErrorResponse, "error"> & { error: { type: string; message: string; code: string } };

/** `{"type":"error","error":{"type","message"},"request_id"}`; Switchyard's stable `code` rides along in `error.code`. */
export function anthropicErrorBody(e: ErrorInfo, requestId: string | null = null): AnthropicErrorBody {
  return { type: "error", error: { type: anthropicErrorType(e.status), message: anthropicMessage(e), code: e.code }, request_id: requestId };
}

/**
 * Anthropic's wording where clients match it: a prompt over the context is `prompt is too long: N
 * tokens > M maximum` (Claude Code compacts on "prompt is too long").
 */
function anthropicMessage(e: ErrorInfo): string {
  if (e.code !== "context_length_exceeded") return e.message;
  const counts = parseContextLengthMessage(e.message);
  return counts ? `prompt is too long: ${counts.promptTokens} tokens > ${counts.contextTokens} maximum` : `prompt is too long: ${e.message}`;
}

/** The error response; its body's `request_id` is `requestId`, else the `x-request-id` among `headers`. */
export function anthropicErrorResponse(err: ProxyError, headers?: HeadersInit, requestId?: string): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json");
  if (err.retryAfter !== undefined) h.set("retry-after", String(err.retryAfter));
  for (const [name, value] of Object.entries(attemptHeaders(err))) h.set(name, value);
  return new Response(JSON.stringify(anthropicErrorBody(err.toInfo(), requestId ?? h.get("x-request-id"))), { status: err.status, headers: h });
}
