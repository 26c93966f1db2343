// A serving page's web-llm error → the client's outcome: the request's fault, a prompt too long, or
// a session that cannot serve now (so another target may).
import { ProxyError } from "../../errors/proxy-error.ts";
import { redactKnownSecrets } from "../../errors/redact-secrets.ts";

// web-llm 0.2.86's error names (err.name, or the prefix of `String(err)` from its Web Worker), grouped by
// what they mean for the client: a mistake in the request (400, every session would refuse it), a
// prompt that does not fit (400 context_length_exceeded), or a session that cannot serve right now
// (retryable: another target may still succeed).
const REQUEST_ERRORS = new Set([
  "RangeError",
  "MinValueError",
  "NonNegativeError",
  "DependencyError",
  "SeedTypeError",
  "StreamingCountError",
  "InvalidStreamOptionsError",
  "InvalidResponseFormatError",
  "InvalidResponseFormatGrammarError",
  "InvalidResponseFormatStructuralTagError",
  "GrammarMatcherInitError",
  "SystemMessageOrderError",
  "MessageOrderError",
  "ContentTypeError",
  "UnsupportedRoleError",
  "UserMessageContentErrorForNonVLM",
  "MultipleTextContentError",
  "UnsupportedFieldsError",
  "UnsupportedModelIdError",
  "CustomSystemPromptError",
  "CustomResponseFormatError",
  "ToolCallOutputParseError",
  "ToolCallOutputInvalidTypeError",
  "ToolCallOutputMissingFieldsError",
  "EmbeddingUnsupportedEncodingFormatError",
  "EmbeddingInputEmptyError",
  "EmbeddingExceedContextWindowSizeError",
]);

/**
 * The engine has no model loaded (yet): web-llm's own engine says ModelNotLoadedError, its Web Worker
 * engine (the bundled page's) WorkerEngineModelNotLoadedError. 503 model_loading; the hub benches the
 * session for the model (relays-in-flight.ts).
 */
export const NOT_LOADED_ERRORS: ReadonlySet<string> = new Set(["ModelNotLoadedError", "WorkerEngineModelNotLoadedError"]);

const CAPABILITY_ERRORS = new Set(["WebGPUNotAvailableError", "ShaderF16SupportError", "FeatureSupportError", "DeviceLostError"]);

const AVAILABILITY_ERRORS = new Set([
  "ModelNotFoundError",
  ...NOT_LOADED_ERRORS,
  "SpecifiedModelNotFoundError",
  "UnclearModelToUseError",
  "NetworkError",
  "TypeError",
  "CompileError",
  "LinkError",
  "IncorrectPipelineLoadedError",
  "EmbeddingUnsupportedModelError",
]);

export type WebLlmErrorGroup = "request" | "context" | "capability" | "availability" | "session" | "unknown";

/** Pure: which group an error belongs to, from its name (and, for web-llm's plain `Error`s, its message). */
export function webLlmErrorGroup(kind: string, message: string): WebLlmErrorGroup {
  if (kind === "ContextWindowSizeExceededError") return "context";
  if (REQUEST_ERRORS.has(kind) || /^InvalidResponseFormat/.test(kind)) return "request";
  if (CAPABILITY_ERRORS.has(kind)) return "capability";
  if (AVAILABILITY_ERRORS.has(kind)) return "availability";
  if (kind === "SessionLost" || kind === "AbortError") return "session";
  if (/Unable to find a compatible GPU|Cannot initialize runtime|WebGPU/i.test(message)) return "capability";
  return "unknown";
}

/**
 * A page's `error {kind, message}` → the client's outcome; the page's text with every known secret
 * redacted. `retryAfter`: the hub's seconds until the session is asked again (a session benched for
 * saying the model is not loaded, loading-bench.ts), else 5.
 */
export function mapWebLlmError(rawKind: string, rawMessage: string, upstream: string, retryAfter = 5): ProxyError {
  const kind = redactKnownSecrets(rawKind);
  const message = redactKnownSecrets(rawMessage);
  switch (webLlmErrorGroup(kind, message)) {
    case "context":
      return new ProxyError({
        status: 400,
        code: "context_length_exceeded",
        param: "messages",
        message: `The request is too long for the model's context: ${message}. Shorten the conversation or lower max_tokens.`,
      });
    case "request":
      return new ProxyError({ status: 400, code: "upstream_error", type: "invalid_request_error", message: `${upstream} rejected the request: ${kind}: ${message}` });
    case "capability":
      return new ProxyError({ status: 503, code: "no_capacity", retryAfter: 5, retryable: true, message: `${upstream} cannot run the model on its GPU (${kind}: ${message}).` });
    case "availability":
      return new ProxyError({
        status: 503,
        code: NOT_LOADED_ERRORS.has(kind) ? "model_loading" : "no_capacity",
        retryAfter,
        retryable: true,
        message: `${upstream} does not have the model ready (${kind}: ${message}).`,
      });
    case "session":
      return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream}: ${message}` });
    default:
      return new ProxyError({ status: 502, code: "upstream_error", retryable: true, message: `${upstream} failed: ${kind}: ${message}` });
  }
}
