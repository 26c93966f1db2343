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
} from "./types.js";
export { PENALTIES, scoreOf } from "./problems.js";
export { rewriteToolCalls, startsInsideReasoning } from "./rewrite-tool-calls.js";
export { ToolCallStreamRewriter } from "./stream-rewriter.js";
export { ToolCallTransform, createToolCallTransform, type ToolCallTransformOptions } from "./tool-call-transform.js";
export { parseJson, parseJsonValue } from "./parse-json.js";
export { isFloatText, toJsonValue, type JsonNode, type JsonValue } from "./json-node.js";
