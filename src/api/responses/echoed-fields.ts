import type { ResponsesRequest } from "../../schemas/responses-request.ts";

/** The request fields a response object repeats back (the tools in their Responses shape). */
export function echoedFields(req: ResponsesRequest): Record<string, unknown> {
  return {
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    temperature: req.temperature ?? null,
    top_p: req.top_p ?? null,
    tools: req.tools ?? [],
    tool_choice: req.tool_choice ?? "auto",
    text: { format: req.text?.format ?? { type: "text" } },
    user: req.user ?? null,
    metadata: req.metadata ?? {},
  };
}
