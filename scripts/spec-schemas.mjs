// The published API specifications in ../shared/data/specs/ (OpenAI's openapi.yaml, the JSON Schema of
// Anthropic's SDK types) as JSON Schema a validator reads: for the conformance test
// (test/e2e/spec-conformance.test.mjs) and the wire types it generates (scripts/gen-wire-types.mjs).
// They are read where they are, never copied into the repository.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { dereference, validate } from "@cfworker/json-schema";

/** `../shared/data/specs` beside the clone (CI and the engineers' machines lay it out so), or SWITCHYARD_SPECS_DIR. */
export const SPECS_DIR = process.env.SWITCHYARD_SPECS_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../shared/data/specs");

/** @typedef {Record<string, any>} Schema */

/** Keywords whose value is one schema. */
const ONE = new Set(["items", "additionalProperties", "not", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems", "if", "then", "else"]);
/** Keywords whose value is a list of schemas. */
const LIST = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);
/** Keywords whose value maps names to schemas. */
const MAP = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
/** Keywords kept as they are; the rest (description, example(s), default, title, x-…, discriminator) validate nothing. */
const PLAIN = new Set([
  "type", "enum", "const", "required", "$ref", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
  "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "nullable",
]);

/**
 * A schema with only what validates, and OpenAPI 3.0's `nullable: true` (which this 3.1 document
 * still uses) read as "null allowed". Examples go: the validator would take their `id`s for schema ids.
 * @param {unknown} s
 * @returns {Schema | boolean}
 */
export function normalizeSchema(s) {
  if (typeof s === "boolean") return s;
  if (!s || typeof s !== "object" || Array.isArray(s)) return {};
  /** @type {Schema} */
  const out = {};
  for (const [k, v] of Object.entries(s)) {
    if (ONE.has(k)) out[k] = normalizeSchema(v);
    else if (LIST.has(k) && Array.isArray(v)) out[k] = v.map(normalizeSchema);
    else if (MAP.has(k) && v && typeof v === "object") out[k] = Object.fromEntries(Object.entries(v).map(([n, x]) => [n, normalizeSchema(x)]));
    else if (PLAIN.has(k)) out[k] = v;
  }
  if (out.nullable !== true) {
    delete out.nullable;
    return out;
  }
  delete out.nullable;
  if (typeof out.type === "string" && !out.$ref) {
    out.type = [out.type, "null"];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [out, { type: "null" }] };
}

/**
 * Every schema of a table normalized, and its unions narrowed (narrowUnion).
 * @param {Record<string, unknown>} table
 * @returns {Record<string, Schema>}
 */
function narrowAll(table) {
  /** @type {Record<string, Schema>} */
  const normalized = Object.fromEntries(Object.entries(table).map(([n, x]) => [n, /** @type {Schema} */ (normalizeSchema(x))]));
  /** @param {Schema} s */
  const resolveRef = (s) => (typeof s.$ref === "string" ? normalized[s.$ref.slice(s.$ref.lastIndexOf("/") + 1)] ?? s : s);
  /** @param {Schema | boolean} s @returns {Schema | boolean} */
  const walk = (s) => {
    if (typeof s === "boolean") return s;
    /** @type {Schema} */
    const out = {};
    for (const [k, v] of Object.entries(s)) {
      if (ONE.has(k)) out[k] = walk(v);
      else if (LIST.has(k)) out[k] = v.map(walk);
      else if (MAP.has(k)) out[k] = Object.fromEntries(Object.entries(v).map(([n, x]) => [n, walk(x)]));
      else out[k] = v;
    }
    for (const k of ["anyOf", "oneOf"]) if (out[k] && Object.keys(out).length === 1) return narrowUnion(out[k], out, resolveRef);
    return out;
  };
  return Object.fromEntries(Object.entries(normalized).map(([n, x]) => [n, /** @type {Schema} */ (walk(x))]));
}

/**
 * The value a variant's `type` (or other tag) property must have, if it pins one (through `allOf`
 * parts and references too).
 * @param {Schema} variant
 * @param {string} prop
 * @param {(s: Schema) => Schema} resolveRef
 * @returns {unknown}
 */
const tagOf = (variant, prop, resolveRef, depth = 0) => {
  if (!variant || depth > 4) return undefined;
  const p = variant.properties?.[prop];
  if (p && "const" in p) return p.const;
  if (p && Array.isArray(p.enum) && p.enum.length === 1) return p.enum[0];
  for (const part of variant.allOf ?? []) {
    const tag = tagOf(resolveRef(part), prop, resolveRef, depth + 1);
    if (tag !== undefined) return tag;
  }
  return undefined;
};

/**
 * A union (anyOf/oneOf) as an if/then chain, so an object is checked against the one variant its tag
 * names and the errors are that variant's alone, not every variant's: `null` first when it is a
 * branch, then each variant by its `type` (or `role`, `object`, `event`) constant. A union without a
 * tag in every variant stays as it is.
 * @param {Schema[]} branches
 * @param {Schema} union
 * @param {(s: Schema) => Schema} resolveRef
 * @returns {Schema}
 */
function narrowUnion(branches, union, resolveRef) {
  const isNull = (/** @type {Schema} */ b) => b.type === "null" && Object.keys(b).length === 1;
  const rest = branches.filter((b) => !isNull(b));
  /** @type {Schema} */
  let chain = rest.length === 1 ? rest[0] : union;
  if (rest.length > 1) {
    const variants = rest.map(resolveRef);
    // The tag most variants pin, each to its own value; variants without it stay in the fallback union.
    let best = { prop: "", tagged: /** @type {number[]} */ ([]) };
    for (const p of ["type", "event", "object", "role"]) {
      const tags = variants.map((v) => tagOf(v, p, resolveRef));
      const tagged = tags.flatMap((t, i) => (t !== undefined && tags.indexOf(t) === tags.lastIndexOf(t) ? [i] : []));
      if (tagged.length > best.tagged.length) best = { prop: p, tagged };
    }
    if (best.tagged.length >= 2) {
      const prop = best.prop;
      chain = { ...union, [union.anyOf ? "anyOf" : "oneOf"]: rest };
      for (const i of [...best.tagged].reverse()) {
        chain = { if: { type: "object", properties: { [prop]: { const: tagOf(variants[i], prop, resolveRef) } }, required: [prop] }, then: rest[i], else: chain };
      }
    }
  }
  return rest.length === branches.length ? chain : { if: { type: "null" }, else: chain };
}

/**
 * A YAML file parsed, through a JSON copy in the temp folder named by the file's SHA-256: the 3 MB
 * openapi.yaml takes seconds to parse and milliseconds to read as JSON.
 * @param {string} path
 */
function readYamlCached(path) {
  const text = readFileSync(path, "utf8");
  const cached = join(tmpdir(), `switchyard-spec-${createHash("sha256").update(text).digest("hex")}.json`);
  try {
    return JSON.parse(readFileSync(cached, "utf8"));
  } catch {}
  const parsed = parseYaml(text, { maxAliasCount: -1 });
  try {
    const tmp = `${cached}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify(parsed));
    renameSync(tmp, cached);
  } catch {}
  return parsed;
}

/**
 * The specifications as published: OpenAI's `components.schemas`, Anthropic's `definitions`, and
 * `sources.json` (the repository and commit of each).
 * @param {string} [dir]
 */
export function readSpecDocuments(dir = SPECS_DIR) {
  if (!existsSync(join(dir, "sources.json"))) throw new Error(`the API specifications are not at ${dir} (../shared/data/specs beside the clone, or set SWITCHYARD_SPECS_DIR)`);
  /** @type {{ openai: { repo: string, commit: string, date: string }, anthropic: { repo: string, commit: string, date: string, version?: string } }} */
  const sources = JSON.parse(readFileSync(join(dir, "sources.json"), "utf8"));
  const openapi = readYamlCached(join(dir, "openai/openapi.yaml"));
  const anthropic = JSON.parse(readFileSync(join(dir, "anthropic/anthropic-schemas.json"), "utf8"));
  return { sources, openai: /** @type {Record<string, unknown>} */ (openapi.components.schemas), anthropic: /** @type {Record<string, unknown>} */ (anthropic.definitions) };
}

/**
 * The two specifications, loaded once: `check(name, value)` lists how `value` breaks the schema
 * `name` ("openai:CreateChatCompletionResponse", "anthropic:Message"), [] when it conforms.
 * @param {string} [dir]
 */
export function loadSpecs(dir = SPECS_DIR) {
  const { sources, openai, anthropic } = readSpecDocuments(dir);
  const openaiSchemas = narrowAll(openai);
  const anthropicSchemas = narrowAll(anthropic);
  const roots = {
    openai: { $id: "https://spec.invalid/openai", components: { schemas: openaiSchemas } },
    anthropic: { $id: "https://spec.invalid/anthropic", definitions: anthropicSchemas },
  };
  const lookup = { ...dereference(roots.openai), ...dereference(roots.anthropic) };
  const pointer = { openai: "#/components/schemas/", anthropic: "#/definitions/" };

  /**
   * @param {string} name `openai:<components.schemas name>` or `anthropic:<definitions name>`
   * @param {unknown} value
   * @returns {string[]}
   */
  function check(name, value) {
    const [spec, schema] = /** @type {["openai" | "anthropic", string]} */ (name.split(":"));
    const table = spec === "openai" ? openaiSchemas : anthropicSchemas;
    if (!table?.[schema]) throw new Error(`no schema ${name} in the specifications (renamed upstream?)`);
    const result = validate(value, { $ref: `${roots[spec].$id}${pointer[spec]}${schema}` }, "2020-12", lookup, false);
    if (result.valid) return [];
    return leafErrors(result.errors);
  }

  /**
   * EXCEPTIONS, made by the conformance test and named there: `property` of schema `name` (found in
   * it or in its allOf parts) also takes null.
   * @param {string} name
   * @param {string} property
   */
  function allowNull(name, property) {
    const [spec, schema] = name.split(":");
    const table = spec === "openai" ? openaiSchemas : anthropicSchemas;
    /** @param {Schema | undefined} s @returns {boolean} */
    const patch = (s) => {
      if (!s) return false;
      if (typeof s.$ref === "string") return patch(table[s.$ref.slice(s.$ref.lastIndexOf("/") + 1)]);
      if (s.properties?.[property]) {
        s.properties[property] = { if: { type: "null" }, else: s.properties[property] };
        return true;
      }
      return (s.allOf ?? []).some(patch);
    };
    if (!patch(table[schema])) throw new Error(`${name} has no property ${property} (the specification changed: revisit the exception)`);
  }

  /**
   * EXCEPTIONS, made by the conformance test and named there: a new schema `name`, a copy of `from`
   * changed by `edit` (for an object the specification describes as another with a difference).
   * @param {string} name
   * @param {string} from
   * @param {(copy: Schema) => void} edit
   */
  function derive(name, from, edit) {
    const [spec, schema] = name.split(":");
    const [fromSpec, fromSchema] = from.split(":");
    if (spec !== fromSpec) throw new Error(`${name} must derive from a schema of the same specification`);
    const table = spec === "openai" ? openaiSchemas : anthropicSchemas;
    const copy = structuredClone(table[fromSchema]);
    if (!copy) throw new Error(`no schema ${from} in the specifications (renamed upstream?)`);
    edit(copy);
    table[schema] = copy;
    const which = /** @type {"openai" | "anthropic"} */ (spec);
    // dereference's pointer has no "#": it adds one.
    Object.assign(lookup, dereference(copy, {}, new URL(roots[which].$id), `${pointer[which].slice(1)}${schema}`));
  }

  return { sources, check, allowNull, derive };
}

/**
 * The errors that say what is wrong (a missing property, a wrong type or value), without the
 * "does not match anyOf / $ref / properties" lines that only lead to them; one line each.
 * @param {import("@cfworker/json-schema").OutputUnit[]} errors
 */
function leafErrors(errors) {
  const leaves = errors.filter((e) => !["anyOf", "oneOf", "allOf", "$ref", "properties", "items", "prefixItems", "additionalProperties", "if", "then", "else"].includes(e.keyword));
  const lines = (leaves.length ? leaves : errors).map((e) => `${e.instanceLocation || "#"}: ${e.error}`);
  return [...new Set(lines)];
}
