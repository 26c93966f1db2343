// Turns a raw call into an OpenAI tool call with a score: resolve the name, read or coerce the
// arguments by the schema, validate them, and multiply out the penalties.

import { newCallId } from "./call-id.ts";
import { coerceArguments, escapePointer } from "./coerce-arguments.ts";
import { convertTextEntry } from "./convert-text-value.ts";
import { jsonObject, serializeJson, setEntry, toJsonValue, type JsonEntry, type JsonObjectNode } from "../json/json-node.ts";
import { appendAll, problem, scoreOf } from "./problems.ts";
import type { RawCall } from "./raw-call.ts";
import { propertySchema } from "./schema-walk.ts";
import type { ToolSet } from "./tool-set.ts";
import type { ScoredToolCall, ToolCallProblem } from "./types.ts";
import { validateArguments } from "./validate-arguments.ts";

export interface FinalizedCall {
  call: ScoredToolCall;
  /**
   * The call plainly fits its tool: the name matched without guessing and every key is declared
   * and every required key present. Calls found in the middle of prose must fit to count.
   */
  fits: boolean;
}

const MISFIT = new Set(["missing_required", "unknown_property", "arguments_not_object", "positional_argument", "name_fuzzy_match"]);

/**
 * Most problems one call lists; past it, one `problems_truncated` says how many more there were.
 * Arguments with thousands of wrong values would otherwise be answered with a problem list several
 * times their size. The score still counts every problem.
 */
export const MAX_LISTED_PROBLEMS = 64;

/** `problems`, at most MAX_LISTED_PROBLEMS of them, and a count of the rest. */
function listed(problems: ToolCallProblem[]): ToolCallProblem[] {
  const rest = problems.length - MAX_LISTED_PROBLEMS;
  if (rest <= 0) return problems;
  return [...problems.slice(0, MAX_LISTED_PROBLEMS), problem("problems_truncated", `${rest} more ${rest === 1 ? "problem" : "problems"} not listed`)];
}

export function finalizeCall(raw: RawCall, tools: ToolSet): FinalizedCall | null {
  let match = tools.resolve(raw.name, true);
  // Llama 3.1 built-ins are called as `brave_search.call(query=…)`.
  if (!match && raw.name.endsWith(".call")) match = tools.resolve(raw.name.slice(0, -5), true);
  if (!match) return null;
  const tool = match.tool;
  const schema = tool.schema;
  const problems: ToolCallProblem[] = [...raw.problems, ...match.problems];

  let args: JsonObjectNode;
  let verbatim: string | undefined;
  if (raw.arguments.kind === "node") {
    const node = raw.arguments.node;
    if (node.kind === "object") {
      const coerced = coerceArguments(node, schema, schema);
      appendAll(problems, coerced.problems);
      args = coerced.node as JsonObjectNode;
      if (!coerced.changed) verbatim = raw.arguments.verbatim;
    } else {
      problems.push(problem("arguments_not_object", `arguments are ${node.kind === "array" ? "an array" : `a ${node.kind}`}, not an object`));
      args = jsonObject([]);
    }
  } else {
    const entries: JsonEntry[] = [];
    for (const entry of raw.arguments.entries) {
      const path = `/${escapePointer(entry.key)}`;
      const read = convertTextEntry(entry, propertySchema(schema, schema, entry.key), schema, path);
      appendAll(problems, read.problems);
      setEntry(entries, entry.key, read.node);
    }
    args = jsonObject(entries);
  }

  appendAll(problems, validateArguments(args, toJsonValue(args), schema, tool.validator));
  const call: ScoredToolCall = {
    id: newCallId(),
    type: "function",
    function: { name: tool.name, arguments: verbatim ?? serializeJson(args) },
    score: scoreOf(problems),
    problems: listed(problems),
  };
  return { call, fits: !problems.some((p) => MISFIT.has(p.code)) };
}
