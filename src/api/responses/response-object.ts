// The Responses API's response object: its fields with their defaults, its usage, and a failure's
// `error.code` as the spec's enum.
import type { Sealer } from "./sealer.ts";
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import type { Usage } from "../../events/events.ts";
import type { ToolNames } from "./tool-origin.ts";
import type { ResponseErrorCode, ResponseUsage } from "../wire/openai-wire.ts";

type Json = Record<string, unknown>;

export interface ResponseMeta {
  id: string;
  createdAt: number;
  /** The model name the client asked for. */
  model: string;
  /** Request fields echoed on the response object (instructions, tools, temperature, …). */
  echo: Json;
  /** The model's tool names → the client's tools (default: every name is a function of that name). */
  tools?: ToolNames;
  /** Seals each reasoning item's text into its `encrypted_content` (include: reasoning.encrypted_content). */
  sealer?: Sealer;
}

/** The response object's fields in `status`, with `output` (copied) and the request's echoed fields. */
export function responseBase(meta: ResponseMeta, status: string, output: Json[]): Json {
  return {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: meta.model,
    output: structuredClone(output),
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: null,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: null,
    truncation: "disabled",
    user: null,
    metadata: {},
    ...meta.echo,
  };
}

export function usageJson(u: Usage | null): ResponseUsage {
  const input = u?.promptTokens ?? 0;
  const output = u?.completionTokens ?? 0;
  return {
    input_tokens: input,
    // cache_write_tokens: llama-server's prompt cache is written as a side effect, never billed apart.
    input_tokens_details: { cached_tokens: u?.cachedTokens ?? 0, cache_write_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

/**
 * A failed Response's `error.code` is one of the spec's values (clients type it as that enum):
 * Switchyard's own code stays in the `error` event that follows `response.failed`.
 */
export function responseErrorCode(e: ErrorInfo): ResponseErrorCode {
  if (e.status === 429) return "rate_limit_exceeded";
  if (e.status >= 400 && e.status < 500) return "invalid_prompt";
  return "server_error";
}
