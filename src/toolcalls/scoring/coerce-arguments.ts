// A JSON value of the wrong type that clearly means the declared one ("5" for an integer, 5 for a
// string, "[1, 2]" for an array) is converted, and the conversion is reported as `coerced_type`:
// the call works, but the model did not follow the schema.

import { jsonBoolean, jsonNumber, jsonString, type JsonEntry, type JsonNode } from "../json/json-node.ts";
import { parseJson } from "../json/parse-json.ts";
import { toJsonNumberText } from "../json/python-literal.ts";
import { problem } from "./problems.ts";
import { itemSchema, propertySchema, schemaTypes, type SchemaType } from "./schema-walk.ts";
import type { JsonSchema, ToolCallProblem } from "./types.ts";

export interface Coerced {
  node: JsonNode;
  problems: ToolCallProblem[];
  changed: boolean;
}

const INTEGER = /^[+-]?\d+$/;
// `\d+(?:\.\d*)?`, not `\d+\.?\d*`: two adjacent digit runs made a long refused number quadratic.
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

export function nodeType(node: JsonNode): SchemaType {
  if (node.kind === "number") return Number.isInteger(node.value) ? "integer" : "number";
  return node.kind;
}

export function allows(types: Set<SchemaType>, actual: SchemaType): boolean {
  return types.size === 0 || types.has(actual) || (actual === "integer" && types.has("number"));
}

export function coerceArguments(node: JsonNode, schema: JsonSchema, root: JsonSchema): Coerced {
  const problems: ToolCallProblem[] = [];
  let changed = false;

  const walk = (value: JsonNode, sub: JsonSchema | undefined, path: string): JsonNode => {
    const types = schemaTypes(sub, root);
    let current = value;
    if (!allows(types, nodeType(value))) {
      const converted = convert(value, types);
      if (converted) {
        problems.push(
          problem(
            "coerced_type",
            `${describe(value)} read as ${nodeType(converted)} as the schema declares`,
            path || "/",
          ),
        );
        changed = true;
        current = converted;
      }
    }
    if (current.kind === "object") {
      const entries: JsonEntry[] = current.entries.map((e) => ({
        key: e.key,
        value: walk(e.value, propertySchema(sub, root, e.key), `${path}/${escapePointer(e.key)}`),
      }));
      return entries.every((e, i) => e.value === (current as { entries: JsonEntry[] }).entries[i]!.value)
        ? current
        : { ...current, entries };
    }
    if (current.kind === "array") {
      const items = current.items.map((item, i) => walk(item, itemSchema(sub, root, i), `${path}/${i}`));
      return items.every((item, i) => item === (current as { items: JsonNode[] }).items[i]) ? current : { ...current, items };
    }
    return current;
  };

  const out = walk(node, schema, "");
  return { node: out, problems, changed };
}

function convert(value: JsonNode, types: Set<SchemaType>): JsonNode | null {
  if (value.kind === "string") {
    const s = value.value.trim();
    if (types.has("integer") && INTEGER.test(s)) return jsonNumber(toJsonNumberText(s));
    if (types.has("number") && NUMBER.test(s)) return jsonNumber(toJsonNumberText(s));
    if (types.has("boolean") && /^(true|false)$/i.test(s)) return jsonBoolean(s.toLowerCase() === "true");
    if (types.has("array") || types.has("object")) {
      const parsed = parseJson(s);
      if (parsed && types.has(nodeType(parsed))) return parsed;
    }
    return null;
  }
  // A number has one obvious string form; `true` might have meant "true", "True" or "yes".
  if (types.has("string") && value.kind === "number") return jsonString(value.text);
  return null;
}

function describe(value: JsonNode): string {
  if (value.kind === "string") return `string ${JSON.stringify(value.value.length > 40 ? value.value.slice(0, 40) + "…" : value.value)}`;
  if (value.kind === "number") return `number ${value.text}`;
  return value.kind;
}

export const escapePointer = (key: string): string => key.replace(/~/g, "~0").replace(/\//g, "~1");
