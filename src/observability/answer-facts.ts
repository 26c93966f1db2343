// What a client was told, in the request log's terms: the model, usage, finish reasons, the error code
// and Switchyard's own extension; read back from an error body when no run told it (pure).

/** The facts one answer carries; each absent until some frame or body says it. */
export interface AnswerFacts {
  model?: string;
  promptTokens?: number;
  completionTokens?: number;
  finishReasons: string[];
  /** The error code the client got (an error body, or the stream's error frame). */
  error?: string;
  /** `x_switchyard` (target, attempts, timings, resumes, tool-call scores). */
  extension?: SwitchyardFacts;
}

export interface SwitchyardFacts {
  target?: string;
  attempts?: number;
  timings?: { first_event_ms?: number; total_ms?: number };
  resumes?: Array<{ from: string; to: string; code: string }>;
  tool_calls?: unknown[];
  policy?: string;
  outcomes?: Array<{ target: string; code: string }>;
}

type Json = Record<string, unknown>;

export const emptyFacts = (): AnswerFacts => ({ finishReasons: [] });

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * Adds what one JSON value of an answer says (a non-stream body, or one stream frame of any of the
 * APIs: chat and text completion chunks, Responses events, Messages events, an error envelope).
 * Later frames override earlier ones, so frames are absorbed in the order the client got them.
 */
export function absorb(facts: AnswerFacts, value: unknown): void {
  if (!isObject(value)) return;
  // Error envelopes: OpenAI's {error: {code}}, Anthropic's {type: "error", error: {type, code}},
  // the Responses stream's `error` event {type: "error", code} and its failed response.
  const error = value.error;
  if (isObject(error)) facts.error = str(error.code) ?? str(error.type) ?? "error";
  else if (value.type === "error") facts.error = str(value.code) ?? "error";
  // A Responses event wraps the response; a Messages `message_start` wraps the message.
  const inner = isObject(value.response) ? value.response : isObject(value.message) ? value.message : undefined;
  if (inner) absorb(facts, inner);
  const model = str(value.model);
  if (model) facts.model = model;
  if (isObject(value.usage)) absorbUsage(facts, value.usage);
  if (Array.isArray(value.choices)) {
    for (const choice of value.choices) {
      const reason = isObject(choice) ? str(choice.finish_reason) : undefined;
      if (reason) facts.finishReasons = [reason];
    }
  }
  // Messages: stop_reason on the message or on message_delta's delta.
  const stop = str(value.stop_reason) ?? (isObject(value.delta) ? str(value.delta.stop_reason) : undefined);
  if (stop) facts.finishReasons = [stop];
  // Responses: the response's status (completed, incomplete with its reason, failed).
  if (value.object === "response" && typeof value.status === "string" && value.status !== "in_progress") {
    const reason = isObject(value.incomplete_details) ? str(value.incomplete_details.reason) : undefined;
    facts.finishReasons = [reason ?? value.status];
  }
  if (isObject(value.x_switchyard)) facts.extension = { ...facts.extension, ...switchyardOf(value.x_switchyard) };
}

/** Usage in OpenAI's (prompt/completion), the Responses API's (input/output) or Anthropic's shape (input excludes cached reads). */
function absorbUsage(facts: AnswerFacts, u: Json): void {
  const prompt = num(u.prompt_tokens) ?? num(u.input_tokens);
  if (prompt !== undefined) facts.promptTokens = prompt + (num(u.cache_read_input_tokens) ?? 0);
  const completion = num(u.completion_tokens) ?? num(u.output_tokens);
  if (completion !== undefined) facts.completionTokens = completion;
}

function switchyardOf(x: Json): SwitchyardFacts {
  const out: SwitchyardFacts = {};
  const target = str(x.target);
  if (target) out.target = target;
  const attempts = num(x.attempts);
  if (attempts !== undefined) out.attempts = attempts;
  if (isObject(x.timings)) out.timings = { ...(num(x.timings.first_event_ms) !== undefined ? { first_event_ms: num(x.timings.first_event_ms) } : {}), ...(num(x.timings.total_ms) !== undefined ? { total_ms: num(x.timings.total_ms) } : {}) };
  if (Array.isArray(x.resumes)) out.resumes = x.resumes.filter(isObject).map((r) => ({ from: String(r.from ?? ""), to: String(r.to ?? ""), code: String(r.code ?? "") }));
  if (Array.isArray(x.tool_calls)) out.tool_calls = x.tool_calls;
  if (typeof x.policy === "string") out.policy = x.policy;
  if (Array.isArray(x.outcomes)) out.outcomes = x.outcomes.filter(isObject).map((o) => ({ target: String(o.target ?? ""), code: String(o.code ?? "") }));
  return out;
}

/** A JSON body as a client got it (a committed body begins with whitespace heartbeats). */
export function absorbJsonBody(facts: AnswerFacts, text: string): void {
  try {
    absorb(facts, JSON.parse(text));
  } catch {
    // Not JSON (cut short, or not an API answer): nothing to read from it.
  }
}

/** `x-switchyard-outcomes` (`target=code; target=code`) as a list. */
export function parseOutcomesHeader(header: string | null): Array<{ target: string; code: string }> {
  if (!header) return [];
  return header
    .split(";")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const at = part.lastIndexOf("=");
      return at < 0 ? { target: decoded(part), code: "" } : { target: decoded(part.slice(0, at)), code: decoded(part.slice(at + 1)) };
    });
}

/** A header token percent-decoded (src/errors/error-envelope.ts encodes what would break the list). */
function decoded(token: string): string {
  try {
    return decodeURIComponent(token);
  } catch {
    return token;
  }
}
