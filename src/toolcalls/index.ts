// The tool-call engine: detect, parse, repair, map and score tool calls that models write as text,
// plus the prompt-mode helpers for models without native tool calling. Pure: no I/O.

export type {
  JsonSchema,
  ProblemCode,
  RewriteOptions,
  RewriteRequest,
  RewriteResult,
  ScoredToolCall,
  ToolCallProblem,
  ToolCallReport,
  ToolChoice,
  ToolDefinition,
} from "./types.ts";
export { PENALTIES, scoreOf } from "./problems.ts";
export { rewriteToolCalls, startsInsideReasoning } from "./rewrite-tool-calls.ts";
export { ToolCallStreamRewriter } from "./stream-rewriter.ts";
export { reasoningOpenAtEnd } from "./prompt-state.ts";
export { OUTPUT_MARKERS } from "./output-markers.ts";
export { ToolCallEvents, type ToolCallEventsOptions } from "./tool-call-events.ts";
export { parseJson, parseJsonValue } from "./parse-json.ts";
export { isFloatText, toJsonValue, type JsonNode, type JsonValue } from "./json-node.ts";
export { buildToolPrompt, type ToolPromptOptions } from "./build-tool-prompt.ts";
export { buildToolCallSchema } from "./build-tool-schema.ts";
export { buildToolCallGrammar } from "./build-tool-grammar.ts";
export { applyPromptMode, type PromptModeConstraint } from "./apply-prompt-mode.ts";
