// Validates a call's arguments against its tool's schema with @cfworker/json-schema (no code
// generation, so it runs in workerd), every client pattern checked in linear time (checked-schema.ts):
// the library never compiles a client regex itself.

import { Validator, format, type OutputUnit } from "@cfworker/json-schema";
import { checkedSchema, literalKey, PATTERN_FORMAT_PREFIX, type CheckedSchema } from "./checked-schema.ts";
import { clientPattern } from "./client-pattern.ts";
import type { JsonValue } from "../json/json-node.ts";
import type { JsonSchema } from "./types.ts";

/** Most distinct keys a call may have for `patternProperties` to be checked; more leave them unchecked. */
export const MAX_KEYS_FOR_PATTERN_PROPERTIES = 128;
/** Longest key for which `patternProperties` are checked (the copy spells each matched key out). */
export const MAX_KEY_LENGTH_FOR_PATTERN_PROPERTIES = 256;

export interface ArgumentCheck {
  errors: OutputUnit[];
  /** Client patterns that applied to this call and were not checked (no linear-time meaning, or caps). */
  unchecked: string[];
}

/** Every key of every object in `value`, or null past the caps. */
function keysOf(value: JsonValue): Set<string> | null {
  const keys = new Set<string>();
  const stack: JsonValue[] = [value];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (Array.isArray(v)) for (const item of v) stack.push(item);
    else if (typeof v === "object" && v !== null) {
      for (const [k, child] of Object.entries(v)) {
        if (k.length > MAX_KEY_LENGTH_FOR_PATTERN_PROPERTIES) return null;
        keys.add(k);
        if (keys.size > MAX_KEYS_FOR_PATTERN_PROPERTIES) return null;
        stack.push(child);
      }
    }
  }
  return keys;
}

export class ArgumentValidator {
  /** The copy when it does not depend on the call (no `patternProperties`), with its validator. */
  private readonly fixed: { checked: CheckedSchema; validator: Validator } | null;

  constructor(private readonly schema: JsonSchema) {
    const checked = checkedSchema(schema, () => null);
    this.fixed = checked.keyPatterns ? null : { checked, validator: new Validator(checked.schema, "2020-12", false) };
  }

  check(value: JsonValue): ArgumentCheck {
    const unchecked = new Set<string>();
    let checked: CheckedSchema;
    let validator: Validator;
    if (this.fixed) ({ checked, validator } = this.fixed);
    else {
      const keys = keysOf(value);
      checked = checkedSchema(this.schema, (source) => {
        const pattern = keys && clientPattern(this.schema, source);
        if (!keys || !pattern) return null;
        const matched = [...keys].filter((k) => pattern.test(k));
        return matched.length === 0 ? "[]" : `^(?:${matched.map(literalKey).join("|")})$`;
      });
      for (const source of checked.uncheckedKeyPatterns) unchecked.add(source);
      validator = new Validator(checked.schema, "2020-12", false);
    }
    const errors = this.withPatternHooks(checked.patterns, unchecked, () => {
      const result = validator.validate(value);
      return result.valid ? [] : result.errors;
    });
    return { errors, unchecked: [...unchecked] };
  }

  /**
   * Runs `validate` with this schema's pattern hooks in the library's format table, and removes
   * them after: validation is synchronous, so no other schema's validation sees them.
   */
  private withPatternHooks<T>(patterns: readonly string[], unchecked: Set<string>, validate: () => T): T {
    const names = patterns.map((source, i) => {
      const name = PATTERN_FORMAT_PREFIX + i;
      format[name] = (text: string) => {
        const pattern = clientPattern(this.schema, source);
        if (pattern) return pattern.test(text);
        unchecked.add(source);
        return true;
      };
      return name;
    });
    try {
      return validate();
    } finally {
      for (const name of names) delete format[name];
    }
  }
}

/** A format error of a pattern hook, told as the pattern it stands for. */
export function patternHookError(unit: OutputUnit): boolean {
  return unit.keyword === "format" && unit.error.includes(`"${PATTERN_FORMAT_PREFIX}`);
}
