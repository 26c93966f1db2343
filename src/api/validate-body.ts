// Checks a parsed request body against its API's zod schema and the llama-server field table: the
// first problem is a 400 naming the field. Also the 400 for a parameter understood but not honoured.
import type * as z from "zod/mini";
import { ProxyError } from "../errors/proxy-error.ts";
import { checkLlamaFields } from "../schemas/llama-fields.ts";
import { parseBody } from "../schemas/parse-body.ts";

/**
 * Validates a parsed request body with a zod schema, then its llama-server fields (LLAMA_FIELDS: what
 * would make the upstream do more than was admitted); the first problem becomes a 400 naming the field.
 */
export function validateBody<S extends z.ZodMiniType>(schema: S, body: unknown): z.output<S> {
  const parsed = parseBody(schema, body, { objectOnly: true, absentUnions: true });
  checkLlamaFields(parsed as Record<string, unknown>);
  return parsed;
}

/** A 400 for a parameter this endpoint understands but Switchyard cannot honour. */
export function unsupported(param: string, message: string): ProxyError {
  return new ProxyError({ status: 400, code: "unsupported_parameter", param, message });
}
