// What tool_choice and parallel_tool_calls leave the model allowed to do, in prompt mode.

import type { ToolChoice, ToolDefinition } from "../scoring/types.ts";

export interface ToolChoicePlan {
  tools: ToolDefinition[];
  /** The model may answer in words instead of calling a tool. */
  mayAnswer: boolean;
  /** The model may call several tools in one reply. */
  mayCallSeveral: boolean;
}

/** null when no tool may be called (no tools, or tool_choice "none"). */
export function planToolChoice(
  tools: readonly ToolDefinition[],
  choice: ToolChoice | undefined,
  parallel: boolean | undefined,
): ToolChoicePlan | null {
  let allowed = tools.filter((t) => t?.type === "function" && typeof t.function?.name === "string");
  if (choice === "none") return null;
  const named = typeof choice === "object" && choice !== null;
  if (named) allowed = allowed.filter((t) => t.function.name === choice.function.name);
  if (allowed.length === 0) return null;
  return {
    tools: allowed,
    mayAnswer: choice === undefined || choice === "auto",
    mayCallSeveral: parallel !== false && !named,
  };
}
