// The copy of a tool's parameters schema that @cfworker/json-schema validates, made so no client
// regex reaches V8's RegExp (which the library calls for `pattern` and `patternProperties`):
// - `pattern: P` becomes `allOf: [..., {format: "<hook>"}]`; while a call is validated the hook is
//   registered in the library's format table and answers with P in linear time (client-pattern.ts). A
//   format applies to strings only, as a pattern does, so every keyword around it (anyOf, not,
//   oneOf, if) means what it meant.
// - each key P of `patternProperties` becomes the list of the call's own keys that P matches on
//   the linear engine, spelled as a literal alternation `^(?:k1|k2)$` (linear on V8); the copy is then made per
//   call. A pattern with no linear-time meaning, or a call with too many or too long keys, makes the entry
//   `"": true`: every key counts as matched and nothing is checked (unchecked, never a false
//   problem from `additionalProperties`).
// - `format: "url"` is dropped: the library's URL regex backtracks on a near-miss URL.

import type { JsonSchema } from "./types.ts";

/** Format names the hooks of one schema's `pattern`s are registered under, while a call is validated. */
export const PATTERN_FORMAT_PREFIX = "x-switchyard-pattern-";

/** Formats whose regex in @cfworker/json-schema backtracks on a long near miss (`http://` + 30 × `a` + `!`: seconds). */
const BACKTRACKING_FORMATS = new Set(["url"]);

/** What cfworker's dereference treats as data, not as a subschema (enum, const, default…). */
const DATA_KEYWORDS = new Set([
  "id", "$id", "$ref", "$schema", "$anchor", "$vocabulary", "$comment", "default", "enum", "const", "required",
  "dependentRequired", "type", "maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf",
  "maxLength", "minLength", "maxItems", "minItems", "uniqueItems", "maxProperties", "minProperties", "examples",
]);
const ARRAY_KEYWORDS = new Set(["prefixItems", "items", "allOf", "anyOf", "oneOf"]);
const MAP_KEYWORDS = new Set(["$defs", "definitions", "properties", "dependentSchemas", "dependencies"]);

const isSchema = (v: unknown): v is JsonSchema => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * How the keys of `patternProperties` are spelled in the copy: the regex (linear on V8) that
 * matches the instance keys `source` matches, or null when `source` is unchecked.
 */
export type KeyPatternSpelling = (source: string) => string | null;

export interface CheckedSchema {
  schema: JsonSchema;
  /** The `pattern` of each hook, by the number in its format name. */
  patterns: string[];
  /** The schema has `patternProperties` somewhere (a copy is then made per call). */
  keyPatterns: boolean;
  /** Every `patternProperties` key the copy left unchecked. */
  uncheckedKeyPatterns: string[];
}

/** The copy of `schema` to validate with; `spell` decides the `patternProperties` keys. */
export function checkedSchema(schema: JsonSchema, spell: KeyPatternSpelling): CheckedSchema {
  const patterns: string[] = [];
  const hooks = new Map<string, number>();
  const unchecked = new Set<string>();
  let keyPatterns = false;

  const hookFor = (source: string): string => {
    let n = hooks.get(source);
    if (n === undefined) {
      n = patterns.length;
      patterns.push(source);
      hooks.set(source, n);
    }
    return PATTERN_FORMAT_PREFIX + n;
  };

  const keyed = (map: JsonSchema): JsonSchema => {
    keyPatterns = true;
    const out: JsonSchema = {};
    for (const [source, sub] of Object.entries(map)) {
      const spelled = spell(source);
      if (spelled === null) unchecked.add(source);
      const key = spelled ?? "";
      const value = spelled === null ? true : copy(sub);
      // Two patterns that match the same keys share an entry: both schemas apply to them.
      out[key] = Object.hasOwn(out, key) ? (out[key] === true ? value : value === true ? out[key] : { allOf: [out[key], value] }) : value;
    }
    return out;
  };

  /** `node` with the changes above; an unchanged part is the same object (no copy to allocate). */
  function copy(node: unknown): unknown {
    if (!isSchema(node)) return node;
    const entries = Object.entries(node);
    let out: JsonSchema | null = null;
    let hook: string | null = null;
    for (let i = 0; i < entries.length; i++) {
      const [key, value] = entries[i]!;
      let next: unknown = value;
      let drop = false;
      if (key === "pattern" && typeof value === "string") {
        hook = hookFor(value);
        drop = true;
      } else if (key === "format" && typeof value === "string" && BACKTRACKING_FORMATS.has(value)) drop = true;
      else if (key === "patternProperties" && isSchema(value)) next = keyed(value);
      else if (DATA_KEYWORDS.has(key)) next = value;
      else if (Array.isArray(value)) next = ARRAY_KEYWORDS.has(key) ? sameOrCopied(value, value.map(copy)) : value;
      else if (MAP_KEYWORDS.has(key) && isSchema(value)) {
        const mapped = Object.entries(value).map(([k, v]) => [k, copy(v)] as const);
        next = mapped.every(([k, v]) => v === value[k]) ? value : Object.fromEntries(mapped);
      }
      // Any other object is read as a subschema, as the library's dereference reads it ($ref may reach it).
      else next = copy(value);
      if (out === null && (drop || next !== value)) out = Object.fromEntries(entries.slice(0, i));
      if (out !== null && !drop) out[key] = next;
    }
    if (out === null) return node;
    if (hook !== null) {
      const allOf = out.allOf;
      if (allOf === undefined || Array.isArray(allOf)) out.allOf = [...(allOf ?? []), { format: hook }];
    }
    return out;
  }

  const out = copy(schema) as JsonSchema;
  return { schema: out, patterns, keyPatterns, uncheckedKeyPatterns: [...unchecked] };
}

/** `copied` when an item differs from `list`'s, else `list` itself. */
const sameOrCopied = (list: unknown[], copied: unknown[]): unknown[] => (copied.every((v, i) => v === list[i]) ? list : copied);

/** `key` as itself in a `u`-flag RegExp: syntax characters escaped, everything else literal. */
export const literalKey = (key: string): string => key.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
