// Reads the JSON shapes models use for calls (reference §1 and §2, key aliases included):
// {name|function|tool_name, arguments|parameters}, OpenAI {type:"function", function:{…}},
// {tool_call: …}, {tool_calls: […]}, name-as-key {get_weather: {…}}, bare arrays of any of these,
// and the no-call wrappers {response: "…"} and LocalAI's {name: "answer", arguments: {message}};
// and the arguments of a call whose name the dialect wrote elsewhere (namedJsonCall).

import { getEntry, jsonObject, type JsonNode } from "../json/json-node.ts";
import { parseJson } from "../json/parse-json.ts";
import { appendAll, problem } from "../scoring/problems.ts";
import type { RawArguments, RawCall, RegionParse } from "../scoring/raw-call.ts";
import { readJsonLenient } from "../json/read-json-lenient.ts";
import type { ToolSet } from "../scoring/tool-set.ts";
import type { ToolCallProblem } from "../scoring/types.ts";

export interface JsonSource {
  /** The text the node's spans point into. */
  text: string;
  repaired: boolean;
  truncated: boolean;
}

const NAME_KEYS = ["name", "function", "tool_name", "tool", "function_name"];
const ARGUMENT_KEYS = ["arguments", "parameters", "args", "input", "tool_input"];
const META_KEYS = new Set(["id", "type", "tool_call_id", "call_id", "index", ...NAME_KEYS]);

/** Keys a call object may start with; the first key of a `{` in prose must be one of these. */
export const CALL_KEYS = new Set([...NAME_KEYS, ...ARGUMENT_KEYS, ...META_KEYS, "tool_call", "tool_calls"]);

export function decodeJsonCalls(
  node: JsonNode,
  source: JsonSource,
  tools: ToolSet,
  allowResponse: boolean,
  outermost = true,
): RegionParse | null {
  const calls: RawCall[] = [];
  const items = node.kind === "array" ? node.items : [node];
  if (items.length === 0) return null;
  for (const item of items) {
    const decoded = decodeOne(item, source, tools, allowResponse && node.kind !== "array");
    if (!decoded) return null;
    if ("content" in decoded) return decoded;
    appendAll(calls, decoded.calls);
  }
  if (calls.length === 0) return null;
  if (!outermost) return { calls };
  const parseProblems: ToolCallProblem[] = [];
  if (source.truncated) {
    // Only the last call can have been cut off by max_tokens.
    calls[calls.length - 1]!.problems.unshift(problem("truncated", "the output stopped inside this call (max_tokens?)"));
  } else if (source.repaired) {
    parseProblems.push(problem("json_repaired", "the call was not valid JSON and was repaired"));
  }
  for (const c of calls) c.problems.unshift(...parseProblems);
  return { calls };
}

function decodeOne(node: JsonNode, source: JsonSource, tools: ToolSet, allowResponse: boolean): RegionParse | null {
  if (node.kind !== "object") return null;
  const wrapped = getEntry(node, "tool_calls");
  if (wrapped && (wrapped.kind === "array" || wrapped.kind === "object")) {
    return decodeJsonCalls(wrapped, source, tools, false, false);
  }
  const single = getEntry(node, "tool_call");
  if (single && single.kind === "object") return decodeOne(single, source, tools, false);

  const response = getEntry(node, "response");
  if (allowResponse && response?.kind === "string" && node.entries.length === 1) {
    return { calls: [], content: response.value };
  }

  const fn = getEntry(node, "function");
  if (fn?.kind === "object" && getEntry(fn, "name")?.kind === "string") return decodeOne(fn, source, tools, false);

  const nameKey = NAME_KEYS.find((k) => getEntry(node, k)?.kind === "string");
  if (nameKey) {
    const name = (getEntry(node, nameKey) as { value: string }).value;
    const argsKey = ARGUMENT_KEYS.find((k) => getEntry(node, k) !== undefined);
    let args: JsonNode;
    if (argsKey) args = getEntry(node, argsKey)!;
    else {
      // Flattened: {"name": "get_weather", "city": "Paris"}.
      args = jsonObject(node.entries.filter((e) => !META_KEYS.has(e.key)));
    }
    const message = args.kind === "object" ? getEntry(args, "message") : undefined;
    if (allowResponse && name === "answer" && !tools.isToolName("answer") && message?.kind === "string") {
      return { calls: [], content: message.value };
    }
    const read = readArguments(args, source, argsKey !== undefined);
    return { calls: [{ name, arguments: read.arguments, problems: read.problems }] };
  }

  // Name as the key: {"get_weather": {"city": "Paris"}}.
  if (node.entries.length === 1) {
    const { key, value } = node.entries[0]!;
    if (tools.isToolName(key) && (value.kind === "object" || value.kind === "string")) {
      const read = readArguments(value, source, true);
      return { calls: [{ name: key, arguments: read.arguments, problems: read.problems }] };
    }
  }
  return null;
}

function readArguments(
  node: JsonNode,
  source: JsonSource,
  spanned: boolean,
): { arguments: RawArguments; problems: ToolCallProblem[] } {
  if (node.kind === "object") {
    const verbatim = spanned && !source.repaired && node.start >= 0 ? source.text.slice(node.start, node.end) : undefined;
    return { arguments: verbatim === undefined ? { kind: "node", node } : { kind: "node", node, verbatim }, problems: [] };
  }
  if (node.kind === "null") return { arguments: { kind: "node", node: jsonObject([]) }, problems: [] };
  if (node.kind !== "string") return { arguments: { kind: "node", node }, problems: [] };
  return readEncodedArguments(node.value);
}

/** OpenAI-style `arguments`: a JSON document inside a string, sometimes encoded twice. */
export function readEncodedArguments(encoded: string): { arguments: RawArguments; problems: ToolCallProblem[] } {
  const problems: ToolCallProblem[] = [];
  let text = encoded;
  if (text.trim() === "") return { arguments: { kind: "node", node: jsonObject([]) }, problems };
  let strict = parseJson(text);
  if (strict?.kind === "string") {
    problems.push(problem("arguments_double_encoded", "arguments were a JSON string inside a JSON string"));
    text = strict.value;
    strict = parseJson(text);
  }
  if (strict) return { arguments: { kind: "node", node: strict, verbatim: text }, problems };
  const lenient = readJsonLenient(text);
  if (!lenient) return { arguments: { kind: "node", node: { kind: "string", value: text, start: -1, end: -1 } }, problems };
  problems.push(
    lenient.truncated
      ? problem("truncated", "the arguments stopped early (max_tokens?)")
      : problem("json_repaired", "the arguments were not valid JSON and were repaired"),
  );
  return { arguments: { kind: "node", node: lenient.node }, problems };
}

/**
 * A call whose name is known (a header or tag carried it: harmony's `to=functions.NAME`,
 * Functionary's `>>>NAME`, `<function=NAME>`, DeepSeek's and Kimi's separators) and whose body is
 * its JSON arguments.
 */
export function namedJsonCall(name: string, body: string): RawCall | null {
  const text = body.trim();
  if (name.trim() === "" || (text !== "" && text[0] !== "{" && text[0] !== '"')) return null;
  const read = readEncodedArguments(text);
  return { name: name.trim(), arguments: read.arguments, problems: read.problems };
}
