// The request's settings a response object repeats back, as OpenAI's response objects do.
import type { ResponsesRequest } from "../../schemas/responses-request.ts";

/** The request fields a response object repeats back (`tools` as the client sent them). */
export function echoedFields(req: ResponsesRequest): Record<string, unknown> {
  const extra = req as Record<string, unknown>;
  return {
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    temperature: req.temperature ?? null,
    top_p: req.top_p ?? null,
    tools: (req.tools ?? []).map(echoedTool),
    tool_choice: req.tool_choice ?? "auto",
    text: { ...(typeof req.text === "object" ? req.text : {}), format: req.text?.format ?? { type: "text" } },
    reasoning: { effort: req.reasoning?.effort ?? null, summary: req.reasoning?.summary ?? null },
    user: req.user ?? null,
    metadata: req.metadata ?? {},
    ...(typeof extra.prompt_cache_key === "string" ? { prompt_cache_key: extra.prompt_cache_key } : {}),
    ...(typeof extra.safety_identifier === "string" ? { safety_identifier: extra.safety_identifier } : {}),
    ...(typeof extra.max_tool_calls === "number" ? { max_tool_calls: extra.max_tool_calls } : {}),
    ...(typeof req.top_logprobs === "number" ? { top_logprobs: req.top_logprobs } : {}),
  };
}

/**
 * A tool as the response repeats it: a function tool has every field the spec requires of one
 * (`strict` and `parameters`, null when the client left them out); other tools as sent.
 */
function echoedTool<T>(tool: T): T {
  if (typeof tool !== "object" || tool === null || (tool as { type?: unknown }).type !== "function") return tool;
  const fn = tool as Record<string, unknown>;
  return { ...fn, parameters: fn.parameters ?? null, strict: fn.strict ?? null } as T;
}
