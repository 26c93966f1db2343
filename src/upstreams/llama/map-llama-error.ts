// llama-server's error (HTTP status and body, or an error frame) → the client's outcome, telling the
// client's mistakes from the server's failures, which llama-server often reports alike.
import { contextLengthMessage } from "../../errors/context-length.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import { redactKnownSecrets } from "../../errors/redact-secrets.ts";

// llama-server reports many client mistakes as 500 (they are thrown as runtime_error), so the
// status alone cannot decide between "your request is wrong" and "this server is broken". These
// messages are client mistakes: answer 400 and never fail over, since every target would refuse too.
const CLIENT_MISTAKES_REPORTED_AS_500 = [
  /^\[json\.exception\./,
  /^Failed to parse (messages|tools|tool_choice)/,
  /tools param requires --jinja/,
  /^Unknown reasoning format/,
  /Cannot use both json_schema and grammar/,
  /Tool call IDs should be alphanumeric/,
  /Conversation roles must alternate/,
  /raise_exception/,
  /Cannot use tools with stream/,
  /Invalid tool call/,
  /Missing tool call type/,
  /Unable to generate parser for this template/,
  /Cannot use custom grammar constraints with tools/,
  // A schema or grammar the server cannot use (response_format, json_schema, a tool's parameters):
  // builds that did not yet answer parameter errors as invalid_request sent these as 500.
  /^"json_schema": /,
  /^JSON schema conversion failed/,
  /^Field '[\w.]+': /,
  /failed to parse grammar/i,
];

// What this server cannot take but another target may (a vision projector it lacks): llama-server
// answers 500. Moving on is right; counting it against the server or retrying it there is not.
const UNSUPPORTED_BY_THIS_SERVER = /^(image|audio|video) input is not supported/;

// A current llama-server parses the whole output once more when the answer is over, strictly, and
// answers this when the model wrote something its template's parser cannot read (a stray byte, a
// tool call with a tag too many, a harmony answer without its channel): a 500, or an error frame
// after the text it could read (llama.cpp issues #25072, #25321, #27025).
const CHAT_PARSE_FAILURE = /^The model produced output that does not match the expected (.+) format/;

// llama-server's router mode answers 400 when the target's `model` is not one of its children: that
// is this server's configuration, not the client's request, so another target may still serve it.
const ROUTER_MODEL_UNAVAILABLE = [/^model '.*' not found/, /^model is not loaded/, /^model name is missing from the request/];

// Router mode: the model's own server process could not start (a truncated or incompatible GGUF, too
// little memory). Loading it again fails the same way, here and, with the same file, elsewhere.
const ROUTER_LOAD_FAILED = /^model name=(.{1,256}) failed to load$/;
// Router mode: the request reached the router while the model's process was stopping (evicted for
// another model). Nothing started; a moment later the router loads it again.
const ROUTER_PROXY_LOST = /^proxy error: Could not establish connection/;
// Router mode: a load asked for while another is under way and `--models-max` is reached. The server
// is full for now, not broken: a busy answer, which does not count against its health.
const ROUTER_MODEL_LIMIT = /^model limit reached/;

export interface LlamaErrorBody {
  code?: unknown;
  message?: unknown;
  type?: unknown;
  n_prompt_tokens?: unknown;
  n_ctx?: unknown;
}

/** Maps llama-server's error (HTTP status plus `{"error":{…}}`, or any other body) to the client's outcome. */
export function mapLlamaError(status: number, body: string, contentType: string | null, upstream: string): ProxyError {
  const parsed = parseErrorBody(body);
  if (!parsed) {
    const kind = contentType?.split(";")[0]?.trim() || "no content type";
    return new ProxyError({
      status: 502,
      code: "upstream_error",
      retryable: true,
      message: `The upstream ${upstream} answered HTTP ${status} with a non-JSON body (${kind}). Check that the target URL points at llama-server, not a proxy or login page.`,
    });
  }
  return mapLlamaErrorObject(status, parsed, upstream);
}

/**
 * The upstream's message is quoted in most outcomes, so it is redacted first: a server or a proxy in
 * front of it may echo what it received, Switchyard's key for it included.
 */
export function mapLlamaErrorObject(status: number, err: LlamaErrorBody, upstream: string): ProxyError {
  const message = typeof err.message === "string" ? redactKnownSecrets(err.message) : "unknown error";
  const type = typeof err.type === "string" ? err.type : "";

  if (type === "exceed_context_size_error" || /exceeds the available context size/.test(message)) return contextTooLong(err, message);
  return refusedByStatus(status, message, upstream) ?? failedByMessage(status, message, upstream);
}

/** The prompt does not fit the server's context (its counts, from the body's fields or its message). */
function contextTooLong(err: LlamaErrorBody, message: string): ProxyError {
  const counted = /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/.exec(message);
  const promptTokens = typeof err.n_prompt_tokens === "number" ? err.n_prompt_tokens : counted ? Number(counted[1]) : undefined;
  const contextTokens = typeof err.n_ctx === "number" ? err.n_ctx : counted ? Number(counted[2]) : undefined;
  // Retryable: a target with a larger context may still take it (tryTargets moves on).
  return new ProxyError({
    status: 400,
    code: "context_length_exceeded",
    param: "messages",
    retryable: true,
    message:
      promptTokens !== undefined && contextTokens !== undefined
        ? contextLengthMessage(promptTokens, contextTokens)
        : `The request is too long for the model's context: ${message}. Shorten the conversation or lower max_tokens.`,
  });
}

/** What llama-server's status alone tells (loading, busy, rate limited, a router without the model, a refused key, a 4xx), or null. */
function refusedByStatus(status: number, message: string, upstream: string): ProxyError | null {
  if (status === 503 && /loading model/i.test(message)) {
    return new ProxyError({
      status: 503,
      code: "model_loading",
      retryAfter: 5,
      retryable: true,
      message: `The model is still loading on ${upstream}; retry in a few seconds.`,
    });
  }
  if (status === 503) {
    return new ProxyError({ status: 503, code: "no_capacity", retryAfter: 2, retryable: true, busy: true, message: `${upstream} has no free slot (${message}); retry shortly.` });
  }
  if (status === 429) {
    return new ProxyError({ status: 503, code: "no_capacity", retryAfter: 2, retryable: true, busy: true, message: `${upstream} is rate limiting (HTTP 429: ${message}); retry shortly.` });
  }
  if (status === 400 && ROUTER_MODEL_UNAVAILABLE.some((re) => re.test(message))) {
    return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} cannot serve the target's model (${message}). Check the target's "model" against the server's models.` });
  }
  if (status === 401 || status === 403) {
    // The client's own key never goes upstream, so this is Switchyard's key for that server.
    return new ProxyError({
      status: 502,
      code: "upstream_error",
      retryable: true,
      message: `${upstream} refused Switchyard's credentials (HTTP ${status}). Check the target's apiKeySecret and the server's --api-key.`,
    });
  }
  if (status === 404) {
    return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} has no chat endpoint (HTTP 404). Check the target URL.` });
  }
  if (status >= 400 && status < 500) {
    return new ProxyError({ status, code: "upstream_error", type: "invalid_request_error", message: `${upstream} rejected the request: ${message}` });
  }
  return null;
}

/** A 5xx (or another status not told apart above), read by its message: a failed load, a model switch, a parser's refusal, media, a client's mistake. */
function failedByMessage(status: number, message: string, upstream: string): ProxyError {
  const failedLoad = status >= 500 ? ROUTER_LOAD_FAILED.exec(message) : null;
  if (failedLoad) {
    // Not retryable: no other try of it is made for this request (a load would evict a model in use
    // for nothing); routing marks it failed on this server (docs/configuration.md, "Router pools").
    return new ProxyError({
      status: 502,
      code: "model_load_failed",
      message: `The model "${failedLoad[1]}" failed to load on ${upstream} (the server could not start it: a damaged or incompatible model file, or not enough memory). Check the server's log; Switchyard will not try it there again for 5 minutes.`,
    });
  }
  if (status >= 500 && ROUTER_MODEL_LIMIT.test(message)) {
    return new ProxyError({ status: 503, code: "no_capacity", retryAfter: 1, retryable: true, busy: true, message: `${upstream} is loading another model and holds no more at once (${message}); retry shortly.` });
  }
  if (status >= 500 && ROUTER_PROXY_LOST.test(message)) {
    return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} was switching models when the request arrived (${message}).` });
  }
  const unparsed = CHAT_PARSE_FAILURE.exec(message);
  if (unparsed) {
    return new ProxyError({
      status: 502,
      code: "upstream_error",
      retryable: true,
      unparsed: true,
      message: `${upstream} generated an answer its chat parser could not read in the template's ${unparsed[1]} format (${message}).`,
    });
  }
  if (UNSUPPORTED_BY_THIS_SERVER.test(message)) {
    // Retryable with a 4xx status: another target may take it; if none does, the client's answer is this 400.
    return new ProxyError({ status: 400, code: "unsupported_content", param: "messages", retryable: true, message: `${upstream} cannot take this request's media: ${message}` });
  }
  if (CLIENT_MISTAKES_REPORTED_AS_500.some((re) => re.test(message))) {
    return new ProxyError({ status: 400, code: "upstream_error", type: "invalid_request_error", message: `${upstream} rejected the request: ${message}` });
  }
  return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} failed (HTTP ${status}): ${message}` });
}

function parseErrorBody(body: string): LlamaErrorBody | null {
  try {
    const json: unknown = JSON.parse(body);
    if (json && typeof json === "object" && "error" in json) {
      const e = (json as { error: unknown }).error;
      if (typeof e === "string") return { message: e };
      if (e && typeof e === "object") return e as LlamaErrorBody;
    }
    return null;
  } catch {
    return null;
  }
}
