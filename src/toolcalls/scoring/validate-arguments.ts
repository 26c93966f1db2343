// JSON Schema validation of the arguments (argument-validator.ts: @cfworker/json-schema, client
// patterns in linear time), mapped onto stable problem codes.

import type { OutputUnit } from "@cfworker/json-schema";
import { ArgumentValidator, patternHookError } from "./argument-validator.ts";
import { escapePointer } from "./coerce-arguments.ts";
import type { JsonObjectNode, JsonValue } from "../json/json-node.ts";
import { problem } from "./problems.ts";
import { declaresProperty } from "./schema-walk.ts";
import type { JsonSchema, ProblemCode, ToolCallProblem } from "./types.ts";

export function createValidator(schema: JsonSchema): ArgumentValidator | null {
  try {
    return new ArgumentValidator(schema);
  } catch {
    return null;
  }
}

const pointer = (instanceLocation: string): string => instanceLocation.replace(/^#/, "") || "/";

function codeFor(unit: OutputUnit, nested: OutputUnit[]): ProblemCode | null {
  switch (unit.keyword) {
    case "required":
      return "missing_required";
    case "type":
      return "wrong_type";
    case "enum":
    case "const":
      return "enum_mismatch";
    case "additionalProperties":
    case "unevaluatedProperties":
      return "unknown_property";
    case "anyOf":
    case "oneOf":
      return nested.length > 0 && nested.every((n) => n.keyword === "type") ? "wrong_type" : "schema_violation";
    // Containers only say "a child failed"; the child's own error says what.
    case "properties":
    case "patternProperties":
    case "items":
    case "prefixItems":
    case "additionalItems":
    case "unevaluatedItems":
    case "contains":
    case "allOf":
    case "$ref":
    case "$recursiveRef":
    case "$dynamicRef":
    case "dependentSchemas":
    case "false":
    case "if":
    case "then":
    case "else":
      return null;
    default:
      return "schema_violation";
  }
}

export function validateArguments(
  args: JsonObjectNode,
  value: JsonValue,
  schema: JsonSchema,
  validator: ArgumentValidator | null,
): ToolCallProblem[] {
  const problems: ToolCallProblem[] = [];
  const seen = new Set<string>();
  const add = (p: ToolCallProblem) => {
    const key = `${p.code} ${p.path ?? ""}`;
    if (seen.has(key)) return;
    seen.add(key);
    problems.push(p);
  };

  // The schema usually does not forbid extra keys, but a key the tool never declared is almost
  // always a hallucination; BFCL fails it too.
  for (const { key } of args.entries) {
    if (!declaresProperty(schema, schema, key)) {
      add(problem("unknown_property", `"${key}" is not a parameter of this tool`, `/${escapePointer(key)}`));
    }
  }

  if (!validator) return problems;
  let errors: OutputUnit[];
  try {
    const result = validator.check(value);
    for (const source of result.unchecked) {
      const shown = source.length > 80 ? `${source.slice(0, 80)}…` : source;
      add(problem("pattern_unchecked", `the pattern ${JSON.stringify(shown)} was not checked: it needs more than a linear-time regex engine runs`));
    }
    if (result.errors.length === 0) return problems;
    errors = result.errors.map((e) => (patternHookError(e) ? { ...e, keyword: "pattern", error: "String does not match pattern." } : e));
  } catch {
    return problems;
  }
  // Errors inside a failed anyOf/oneOf branch are summarised by the anyOf/oneOf error itself. The
  // validator lists a container's error right before its nested ones, so one pass finds them (a
  // search of all errors per error was quadratic: 150,000 unknown keys never finished).
  let branch: string | null = null;
  for (let i = 0; i < errors.length; i++) {
    const unit = errors[i]!;
    if (branch !== null && unit.keywordLocation.startsWith(branch)) continue;
    branch = null;
    let nested: OutputUnit[] = [];
    if (unit.keyword === "anyOf" || unit.keyword === "oneOf") {
      branch = unit.keywordLocation + "/";
      let end = i + 1;
      while (end < errors.length && errors[end]!.keywordLocation.startsWith(branch)) end++;
      nested = errors.slice(i + 1, end);
    }
    const code = codeFor(unit, nested);
    if (!code) continue;
    let path = pointer(unit.instanceLocation);
    if (code === "missing_required" || code === "unknown_property") {
      const m = /property "(.*?)"/i.exec(unit.error);
      if (m) path = `${path === "/" ? "" : path}/${escapePointer(m[1]!)}`;
    }
    add(problem(code, unit.error, path));
  }
  // A value of the wrong type fails its enum and format too; report the type once.
  const mistyped = new Set(problems.filter((p) => p.code === "wrong_type").map((p) => p.path));
  return problems.filter((p) => p.code === "wrong_type" || !mistyped.has(p.path) || p.code === "unknown_property" || p.code === "missing_required");
}
