// The tool-call engine: detect, parse, repair, map and score tool calls that models write as text,
// plus the prompt-mode helpers for models without native tool calling. Pure: no I/O.

export type {
  JsonSchema,
  ProblemCode,
  ScoredToolCall,
  ToolCallProblem,
  ToolCallReport,
  ToolChoice,
  ToolDefinition,
} from "./scoring/types.ts";
export { PENALTIES, scoreOf } from "./scoring/problems.ts";
export type { RewriteOptions } from "./scan/rewrite-options.ts";
export { rewriteToolCalls, startsInsideReasoning, type RewriteRequest, type RewriteResult } from "./rewrite-tool-calls.ts";
export { ToolCallStreamRewriter } from "./scan/stream-rewriter.ts";
export { reasoningOpenAtEnd } from "./prompt/prompt-state.ts";
export { OUTPUT_MARKERS } from "./dialects/output-markers.ts";
export { ToolCallEvents, type ToolCallEventsOptions } from "./tool-call-events.ts";
export { parseJson, parseJsonValue } from "./json/parse-json.ts";
export { isFloatText, toJsonValue, type JsonNode, type JsonValue } from "./json/json-node.ts";
export { buildToolPrompt, type ToolPromptOptions } from "./prompt/build-tool-prompt.ts";
export { buildToolCallSchema } from "./prompt/build-tool-schema.ts";
export { buildToolCallGrammar } from "./prompt/build-tool-grammar.ts";
export { applyPromptMode, type PromptModeConstraint } from "./prompt/apply-prompt-mode.ts";
