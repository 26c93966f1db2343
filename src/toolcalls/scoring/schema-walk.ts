// Just enough JSON Schema navigation to know which type a value should have: properties, items,
// prefixItems, local $ref, and the union of types across anyOf/oneOf.

import { clientPattern } from "./client-pattern.ts";
import type { JsonSchema } from "./types.ts";

export type SchemaType = "object" | "array" | "string" | "number" | "integer" | "boolean" | "null";

const isSchema = (v: unknown): v is JsonSchema => typeof v === "object" && v !== null && !Array.isArray(v);

function deref(schema: JsonSchema, root: JsonSchema, depth = 0): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== "string" || !ref.startsWith("#") || depth > 16) return schema;
  let target: unknown = root;
  for (const raw of ref.slice(1).split("/").filter(Boolean)) {
    const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    target = isSchema(target) ? target[part] : undefined;
  }
  return isSchema(target) ? deref(target, root, depth + 1) : schema;
}

function alternatives(schema: JsonSchema): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const list = schema[key];
    if (Array.isArray(list)) for (const s of list) if (isSchema(s)) out.push(s);
  }
  return out;
}

/** The types a schema allows; empty when it does not say. */
export function schemaTypes(schema: JsonSchema | undefined, root: JsonSchema): Set<SchemaType> {
  const out = new Set<SchemaType>();
  if (!schema) return out;
  const s = deref(schema, root);
  const t = s.type;
  if (typeof t === "string") out.add(t as SchemaType);
  else if (Array.isArray(t)) for (const x of t) if (typeof x === "string") out.add(x as SchemaType);
  if (out.size === 0) {
    for (const alt of alternatives(s)) for (const x of schemaTypes(alt, root)) out.add(x);
  }
  if (out.size === 0 && Array.isArray(s.enum)) {
    for (const v of s.enum) out.add(typeOfValue(v));
  }
  if (out.size === 0 && isSchema(s.properties)) out.add("object");
  return out;
}

function typeOfValue(v: unknown): SchemaType {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v as SchemaType;
}

/** The schema of one property of an object, or undefined when the schema does not declare it. */
export function propertySchema(schema: JsonSchema | undefined, root: JsonSchema, key: string): JsonSchema | undefined {
  if (!schema) return undefined;
  const s = deref(schema, root);
  const props = s.properties;
  // Own keys only: a model's argument named "constructor" must not find Object.prototype's.
  if (isSchema(props) && Object.hasOwn(props, key) && isSchema(props[key])) return props[key];
  for (const alt of alternatives(s)) {
    const found = propertySchema(alt, root, key);
    if (found) return found;
  }
  if (isSchema(s.additionalProperties)) return s.additionalProperties;
  return undefined;
}

/** Whether the object schema declares this key (or allows any key through a schema). */
export function declaresProperty(schema: JsonSchema, root: JsonSchema, key: string): boolean {
  const s = deref(schema, root);
  const props = s.properties;
  if (!isSchema(props)) return true;
  if (Object.hasOwn(props, key)) return true;
  if (s.additionalProperties === true || isSchema(s.additionalProperties)) return true;
  if (isSchema(s.patternProperties)) {
    for (const source of Object.keys(s.patternProperties)) {
      // In linear time, never V8's RegExp (client-pattern.ts); a pattern it cannot check declares the key.
      const pattern = clientPattern(root, source);
      if (!pattern || pattern.test(key)) return true;
    }
  }
  return alternatives(s).some((alt) => isSchema(deref(alt, root).properties) && declaresProperty(alt, root, key));
}

/** The schema of the item at `index` of an array. */
export function itemSchema(schema: JsonSchema | undefined, root: JsonSchema, index: number): JsonSchema | undefined {
  if (!schema) return undefined;
  const s = deref(schema, root);
  const prefix = s.prefixItems;
  if (Array.isArray(prefix) && index < prefix.length) {
    const p = prefix[index];
    return isSchema(p) ? p : undefined;
  }
  if (isSchema(s.items)) return s.items;
  for (const alt of alternatives(s)) {
    const found = itemSchema(alt, root, index);
    if (found) return found;
  }
  return undefined;
}
