// An OpenAI-compatible server's error (HTTP status and body, or an error frame in its stream) → the client's outcome.
import { contextLengthMessage } from "../../errors/context-length.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import { redactKnownSecrets } from "../../errors/redact-secrets.ts";

/** What an error body says, whichever server wrote it. */
export interface OpenAiErrorBody {
  message: string;
  type?: string;
  code?: string;
}

const MAX_MESSAGE = 500;

/**
 * Pure: the error in a body, from the shapes servers write: OpenAI's and current vLLM's
 * `{"error":{"message","type","code"}}`, Ollama's (the same with `code: null`), older vLLM's
 * top-level `{"object":"error","message","type","code"}`, TGI's `{"error":"…","error_type"}`,
 * FastAPI's `{"detail":…}` and gateways' `{"message":…}`. Null when the body holds none.
 */
export function readErrorBody(json: unknown): OpenAiErrorBody | null {
  if (!json || typeof json !== "object") return null;
  const o = json as Record<string, unknown>;
  const inner = o.error;
  if (inner && typeof inner === "object") return fields(inner as Record<string, unknown>);
  if (typeof inner === "string") return { message: inner, ...(typeof o.error_type === "string" ? { type: o.error_type } : {}) };
  if (o.object === "error" || typeof o.message === "string") return fields(o);
  if (o.detail !== undefined) return { message: typeof o.detail === "string" ? o.detail : JSON.stringify(o.detail) };
  return null;
}

function fields(o: Record<string, unknown>): OpenAiErrorBody {
  return {
    message: typeof o.message === "string" ? o.message : "unknown error",
    ...(typeof o.type === "string" ? { type: o.type } : {}),
    ...(typeof o.code === "string" ? { code: o.code } : {}),
  };
}

/** Maps an HTTP error answer of `path` (`/chat/completions`, …) to the client's outcome. */
export function mapOpenAiError(status: number, body: string, contentType: string | null, upstream: string, path: string): ProxyError {
  let parsed: OpenAiErrorBody | null = null;
  try {
    parsed = readErrorBody(JSON.parse(body));
  } catch {}
  const kind = contentType?.split(";")[0]?.trim() || "no content type";
  return mapOpenAiErrorObject(status, parsed ?? { message: `a ${kind} body without an error message` }, upstream, path);
}

/**
 * The outcome of one error. The upstream's message is quoted in most outcomes, so it is redacted
 * first (a server or a gateway in front of it may echo what it received, Switchyard's key included).
 */
export function mapOpenAiErrorObject(status: number, err: OpenAiErrorBody, upstream: string, path: string): ProxyError {
  const message = redactKnownSecrets(err.message).slice(0, MAX_MESSAGE);
  if (err.code === "context_length_exceeded" || (status !== 429 && /maximum context length|context length|longer than the maximum model length|too many tokens/i.test(message))) {
    // Retryable: a target with a larger context may still take it.
    const counts = contextCounts(message);
    return new ProxyError({
      status: 400,
      code: "context_length_exceeded",
      param: "messages",
      retryable: true,
      message: counts ? contextLengthMessage(counts.promptTokens, counts.contextTokens) : `The request is too long for the model's context on ${upstream}: ${message}. Shorten the conversation or lower max_tokens.`,
    });
  }
  if (err.code === "model_not_found" || ((status === 404 || status === 400) && /model\b.*\b(not found|does not exist|not loaded|is not available)/i.test(message))) {
    // This server's configuration, not the client's request: another target may serve the model.
    return new ProxyError({
      status: 502,
      code: "upstream_error",
      retryable: true,
      message: `${upstream} does not serve the model asked for (HTTP ${status}: ${message}). Check the target's "model" against the server's GET /v1/models (Ollama: ollama pull it).`,
    });
  }
  if (status === 401 || status === 403) {
    // The client's own key never goes upstream, so this is Switchyard's key (or headers) for that server.
    return new ProxyError({
      status: 502,
      code: "upstream_error",
      retryable: true,
      message: `${upstream} refused Switchyard's credentials (HTTP ${status}: ${message}). Check the target's apiKeySecret and headers.`,
    });
  }
  if (status === 404 || status === 405) {
    return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} has no ${path} endpoint (HTTP ${status}). Check the target URL: the server's base, with or without /v1.` });
  }
  if (status === 429) {
    return new ProxyError({ status: 503, code: "no_capacity", retryAfter: 2, retryable: true, busy: true, message: `${upstream} is rate limiting (HTTP 429: ${message}); retry shortly.` });
  }
  if (status === 503 && /loading/i.test(message)) {
    return new ProxyError({ status: 503, code: "model_loading", retryAfter: 5, retryable: true, message: `The model is still loading on ${upstream}; retry in a few seconds.` });
  }
  if (status === 503) {
    return new ProxyError({ status: 503, code: "no_capacity", retryAfter: 2, retryable: true, busy: true, message: `${upstream} is unavailable (HTTP 503: ${message}); retry shortly.` });
  }
  if (status === 408 || status === 504 || status === 524) {
    return new ProxyError({ status: 504, code: "upstream_timeout", retryable: true, message: `${upstream} timed out (HTTP ${status}: ${message}).` });
  }
  if (status >= 400 && status < 500) {
    return new ProxyError({ status: status === 422 ? 400 : status, code: "upstream_error", type: "invalid_request_error", message: `${upstream} rejected the request: ${message}` });
  }
  return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} failed (HTTP ${status}): ${message}` });
}

/** The prompt's tokens and the context's, where the message says both (OpenAI's, vLLM's, SGLang's wordings). */
function contextCounts(message: string): { promptTokens: number; contextTokens: number } | null {
  const context = /maximum context length (?:is|of) (\d+)|maximum model length of (\d+)|context length \((\d+) tokens\)/i.exec(message);
  const prompt = /messages resulted in (\d+) tokens|request has (\d+) input tokens|(\d+) in the messages|prompt \(length (\d+)\)|input \((\d+) tokens\)/i.exec(message);
  const first = (m: RegExpExecArray | null) => (m ? Number(m.slice(1).find((g) => g !== undefined)) : undefined);
  const contextTokens = first(context);
  const promptTokens = first(prompt);
  return contextTokens !== undefined && promptTokens !== undefined ? { promptTokens, contextTokens } : null;
}
