// The limits on the JSON Schemas a request declares (a tool's parameters, a response format's
// schema), as zod checks every endpoint that takes them shares: chat completions, Responses,
// Messages and the tool-call rewrite. Past the schema, the proxy walks these values (normalizing,
// compiling the validator, writing them upstream), and a walk that recurses would overflow the
// stack on a schema nested thousands deep, so the depth is refused here first, with a 400.
import * as z from "zod/mini";
import { nestingDepth } from "./nesting-depth.ts";
import { MAX_TOOL_SCHEMA_DEPTH, MAX_TOOL_SCHEMAS_LENGTH, MAX_TOOLS } from "./tool-limits.ts";

/** One declared schema, and where it is relative to the value the check is on. */
export interface SchemaAt {
  path: PropertyKey[];
  schema: unknown;
}

export const TOO_DEEP = `must not nest objects and arrays more than ${MAX_TOOL_SCHEMA_DEPTH} levels deep`;
const TOO_LONG = `must not declare parameters of over ${MAX_TOOL_SCHEMAS_LENGTH} characters of JSON in all`;
const TOO_MANY = `must declare at most ${MAX_TOOLS} tools, counting those inside namespaces`;

/**
 * The first problem with a request's tool schemas: one nested deeper than MAX_TOOL_SCHEMA_DEPTH,
 * all together longer than MAX_TOOL_SCHEMAS_LENGTH as JSON, or more than MAX_TOOLS tools. Each
 * schema's depth is measured before it is written out, so the length is only taken of a shallow one.
 */
export function toolSchemasProblem(schemas: readonly SchemaAt[], toolCount: number): { path: PropertyKey[]; message: string } | null {
  if (toolCount > MAX_TOOLS) return { path: [], message: TOO_MANY };
  let length = 0;
  for (const { path, schema } of schemas) {
    if (schema === undefined || schema === null) continue;
    if (nestingDepth(schema, MAX_TOOL_SCHEMA_DEPTH) > MAX_TOOL_SCHEMA_DEPTH) return { path, message: TOO_DEEP };
    length += JSON.stringify(schema).length;
    if (length > MAX_TOOL_SCHEMAS_LENGTH) return { path: [], message: TOO_LONG };
  }
  return null;
}

/**
 * A check on a `tools` array: `schemasOf` lists each tool's schema with its path inside the array
 * (`[3, "function", "parameters"]`), `countOf` how many tools it declares (namespaces hold more).
 * A problem is a `custom` issue, which parseBody answers as `400 invalid_value` naming the field.
 */
export function toolSchemaLimits<T>(schemasOf: (tools: T[]) => SchemaAt[], countOf: (tools: T[]) => number = (tools) => tools.length) {
  return z.superRefine<T[]>((tools, ctx) => {
    const problem = toolSchemasProblem(schemasOf(tools), countOf(tools));
    if (problem) ctx.addIssue({ code: "custom", path: problem.path, message: problem.message, input: tools });
  });
}

/** A check on a response format's schema (or any one declared schema): no deeper than MAX_TOOL_SCHEMA_DEPTH. */
export function schemaDepthLimit<T>() {
  return z.superRefine<T>((schema, ctx) => {
    if (nestingDepth(schema, MAX_TOOL_SCHEMA_DEPTH) > MAX_TOOL_SCHEMA_DEPTH) ctx.addIssue({ code: "custom", message: TOO_DEEP, input: schema });
  });
}

/**
 * A check on a whole request for the schemas it may carry in fields it does not otherwise check
 * (chat's `response_format`, llama.cpp's `json_schema`): each found object at `paths` is held to
 * the depth limit; anything else there is left to the upstream to judge, as before.
 */
export function looseSchemaDepthLimit<T>(paths: ReadonlyArray<readonly string[]>) {
  return z.superRefine<T>((request, ctx) => {
    for (const path of paths) {
      let v: unknown = request;
      for (const key of path) v = v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>)[key] : undefined;
      if (v !== null && typeof v === "object" && nestingDepth(v, MAX_TOOL_SCHEMA_DEPTH) > MAX_TOOL_SCHEMA_DEPTH) {
        ctx.addIssue({ code: "custom", path: [...path], message: TOO_DEEP, input: v });
        return;
      }
    }
  });
}
