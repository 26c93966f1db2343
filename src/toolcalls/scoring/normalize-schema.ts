// Clients sometimes send Gorilla/BFCL-style type names (`dict`, `float`, `tuple`, `any`) that JSON
// Schema does not know; a validator would then reject every value. Map them the way BFCL's
// GORILLA_TO_OPENAPI does, and drop types nobody knows instead of guessing.

import type { JsonSchema } from "./types.ts";

const JSON_TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);

const ALIASES: Record<string, string | undefined> = {
  dict: "object",
  HashMap: "object",
  Hashtable: "object",
  float: "number",
  double: "number",
  long: "integer",
  short: "integer",
  byte: "integer",
  Bigint: "integer",
  String: "string",
  char: "string",
  any: undefined,
  Any: undefined,
  bool: "boolean",
  list: "array",
  tuple: "array",
  ArrayList: "array",
  Array: "array",
  Queue: "array",
  Stack: "array",
};

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function mapType(type: unknown): unknown {
  if (typeof type === "string") {
    if (JSON_TYPES.has(type)) return type;
    return Object.hasOwn(ALIASES, type) ? ALIASES[type] : undefined;
  }
  if (Array.isArray(type)) {
    const mapped = type.map(mapType).filter((t): t is string => typeof t === "string");
    return mapped.length > 0 ? mapped : undefined;
  }
  return undefined;
}

const SCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SCHEMA_VALUES = ["items", "additionalProperties", "not", "if", "then", "else", "contains"];

export function normalizeSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  if ("type" in schema) {
    const type = mapType(schema.type);
    if (type === undefined) delete out.type;
    else out.type = type;
  }
  for (const key of SCHEMA_MAPS) {
    const map = schema[key];
    if (isSchema(map)) {
      const next: JsonSchema = {};
      for (const [k, v] of Object.entries(map)) next[k] = isSchema(v) ? normalizeSchema(v) : v;
      out[key] = next;
    }
  }
  for (const key of SCHEMA_LISTS) {
    const list = schema[key];
    if (Array.isArray(list)) out[key] = list.map((v) => (isSchema(v) ? normalizeSchema(v) : v));
  }
  for (const key of SCHEMA_VALUES) {
    const v = schema[key];
    if (isSchema(v)) out[key] = normalizeSchema(v);
    else if (key === "items" && Array.isArray(v)) out[key] = v.map((s) => (isSchema(s) ? normalizeSchema(s) : s));
  }
  return out;
}

/** The parameters schema of a tool, as an object schema even when the client sent none. */
export function parametersSchema(parameters: JsonSchema | undefined): JsonSchema {
  if (!parameters || !isSchema(parameters)) return { type: "object", properties: {} };
  const schema = normalizeSchema(parameters);
  if (schema.type === undefined && schema.properties !== undefined) schema.type = "object";
  return schema;
}
