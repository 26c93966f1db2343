// Errors as OpenAI clients read them: the `{"error": …}` body and response, the attempt headers,
// and the 500 that anything else thrown becomes.
import { ProxyError, type ErrorInfo, type TargetOutcome } from "./proxy-error.ts";

export interface ErrorEnvelope {
  error: { message: string; type: string; param: string | null; code: string };
  /** Switchyard's addition beside OpenAI's `error`, when the request tried targets. */
  x_switchyard?: { attempts: number; outcomes: TargetOutcome[] };
}

export function errorEnvelope(info: ErrorInfo): ErrorEnvelope {
  return { error: { message: info.message, type: info.type, param: info.param ?? null, code: info.code } };
}

/** The OpenAI-style JSON error response, with `Retry-After` when the error says when to come back. */
export function errorResponse(err: ProxyError, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/json");
  if (err.retryAfter !== undefined) h.set("retry-after", String(err.retryAfter));
  for (const [name, value] of Object.entries(attemptHeaders(err))) h.set(name, value);
  const body: ErrorEnvelope = errorEnvelope(err.toInfo());
  if (err.outcomes) body.x_switchyard = { attempts: err.attempts ?? 0, outcomes: err.outcomes };
  return new Response(JSON.stringify(body), { status: err.status, headers: h });
}

/**
 * `x-switchyard-attempts` and `x-switchyard-outcomes` of an error that ended a request which tried
 * targets: `llama:10.0.0.1:8080=upstream_unreachable; browser:Qwen…=no_capacity`, each target's last
 * code in the order tried. Codes and target names only (the names are public in
 * `x-switchyard-target`).
 */
export function attemptHeaders(err: ProxyError): Record<string, string> {
  const h: Record<string, string> = {};
  if (err.attempts !== undefined) h["x-switchyard-attempts"] = String(err.attempts);
  if (err.outcomes?.length) h["x-switchyard-outcomes"] = outcomesHeader(err.outcomes);
  return h;
}

export function outcomesHeader(outcomes: readonly TargetOutcome[]): string {
  return outcomes.map((o) => `${headerToken(o.target)}=${headerToken(o.code)}`).join("; ");
}

/** Percent-encodes what would break the header's `name=code; …` list or a header value (non-ASCII, controls, `;`, `=`, `,`, `%`, quotes, spaces). */
function headerToken(s: string): string {
  return s.replace(/[^\x21-\x7e]+|[;=,%"\\]/g, (run) => [...new TextEncoder().encode(run)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join(""));
}

/** Anything thrown that is not a ProxyError is a bug: answer 500 without leaking its details. */
export function toProxyError(err: unknown): ProxyError {
  if (err instanceof ProxyError) return err;
  console.error("internal error", err instanceof Error ? err.stack : String(err));
  return new ProxyError({ status: 500, type: "api_error", code: "internal_error", message: "Switchyard hit an internal error; the request was not completed. Check the Worker logs." });
}
