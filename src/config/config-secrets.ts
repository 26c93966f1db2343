// The secrets a configuration holds, found by walking its parsed value alongside its schema: every
// field marked in `secretFields` (config-schema.ts) is read, whatever kind of target or section it sits
// in, so a new secret field is redacted once it is marked (pure).
import type * as z from "zod/mini";
import { secretFields } from "./config-schema.ts";

/** What a configuration tells of its secrets: the Worker secrets it names, and the secret values it holds itself. */
export interface ConfigSecrets {
  /** Names of Worker secrets (each `apiKeySecret`): their values are looked up in the environment. */
  names: string[];
  /** Values written in the configuration (each `headers` value of an `openai` target or the collector). */
  values: string[];
}

/** The schema kinds that hold no other schema: nothing below them to walk. */
const LEAVES = new Set(["string", "number", "int", "boolean", "bigint", "literal", "enum", "unknown", "any", "null", "undefined", "never", "date", "nan", "void", "symbol"]);

interface Def {
  type: string;
  shape?: Record<string, z.ZodMiniType>;
  innerType?: z.ZodMiniType;
  element?: z.ZodMiniType;
  valueType?: z.ZodMiniType;
  options?: z.ZodMiniType[];
  in?: z.ZodMiniType;
  out?: z.ZodMiniType;
  getter?: () => z.ZodMiniType;
}
const defOf = (schema: z.ZodMiniType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The secrets in `value`, a value `schema` accepted (pure). */
export function configSecrets(schema: z.ZodMiniType, value: unknown): ConfigSecrets {
  const out: ConfigSecrets = { names: [], values: [] };
  walk(schema, value, out);
  out.names = [...new Set(out.names)];
  out.values = [...new Set(out.values)];
  return out;
}

function walk(schema: z.ZodMiniType, value: unknown, out: ConfigSecrets): void {
  if (value === undefined || value === null) return;
  const mark = secretFields.get(schema);
  if (mark?.secret === "env-name" && typeof value === "string") out.names.push(value);
  if (mark?.secret === "values" && typeof value === "object") {
    for (const v of Object.values(value)) if (typeof v === "string") out.values.push(v);
  }
  const def = defOf(schema);
  switch (def.type) {
    case "object":
      for (const [key, field] of Object.entries(def.shape!)) if (Object.hasOwn(value as object, key)) walk(field, (value as Record<string, unknown>)[key], out);
      return;
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "nonoptional":
    case "readonly":
    case "catch":
      return walk(def.innerType!, value, out);
    case "array":
      if (Array.isArray(value)) for (const item of value) walk(def.element!, item, out);
      return;
    case "record":
      if (typeof value === "object") for (const item of Object.values(value)) walk(def.valueType!, item, out);
      return;
    case "union":
      // Only the options the value is one of (a discriminated union's by its kind): a field another
      // option marks differently is not read as a secret.
      for (const option of def.options!) if ((option as z.ZodMiniType).safeParse(value).success) walk(option, value, out);
      return;
    case "pipe":
      return walk(def.out!, value, out);
    case "lazy":
      return walk(def.getter!(), value, out);
    // Leaves hold nothing. A kind not named here is one the configuration's schema does not use
    // (test/unit/config/config-secrets.test.ts fails when it starts to: then teach the walk it).
  }
}

/** Every schema kind under `schema` (for the test that the walker knows each one the configuration uses). */
export function schemaKinds(schema: z.ZodMiniType, seen = new Set<z.ZodMiniType>(), kinds = new Set<string>()): Set<string> {
  if (seen.has(schema)) return kinds;
  seen.add(schema);
  const def = defOf(schema);
  kinds.add(def.type);
  const children = [...Object.values(def.shape ?? {}), def.innerType, def.element, def.valueType, ...(def.options ?? []), def.in, def.out].filter((s): s is z.ZodMiniType => s !== undefined);
  for (const child of children) schemaKinds(child, seen, kinds);
  return kinds;
}

/** The schema kinds `configSecrets` walks into or knows to hold nothing. */
export const WALKED_KINDS: ReadonlySet<string> = new Set([...LEAVES, "object", "optional", "nullable", "default", "prefault", "nonoptional", "readonly", "catch", "array", "record", "union", "pipe", "lazy"]);
