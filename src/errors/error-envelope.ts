import type { ErrorInfo } from "../stream/events.ts";
import { ProxyError } from "./proxy-error.ts";

export interface ErrorEnvelope {
  error: { message: string; type: string; param: string | null; code: string };
}

export function errorEnvelope(info: ErrorInfo): ErrorEnvelope {
  return { error: { message: info.message, type: info.type, param: info.param ?? null, code: info.code } };
}

/** The OpenAI-style JSON error response, with `Retry-After` when the error says when to come back. */
export function errorResponse(err: ProxyError, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json");
  if (err.retryAfter !== undefined) h.set("retry-after", String(err.retryAfter));
  return new Response(JSON.stringify(errorEnvelope(err.toInfo())), { status: err.status, headers: h });
}

/** Anything thrown that is not a ProxyError is a bug: answer 500 without leaking its details. */
export function toProxyError(err: unknown): ProxyError {
  if (err instanceof ProxyError) return err;
  console.error("internal error", err instanceof Error ? err.stack : String(err));
  return new ProxyError({ status: 500, type: "api_error", code: "internal_error", message: "Switchyard hit an internal error; the request was not completed. Check the Worker logs." });
}
