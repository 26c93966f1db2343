// Checks a parsed request body against its API's zod schema: the first problem is a 400 naming
// the field. Also the 400 for a parameter understood but not honoured.
import type * as z from "zod/mini";
import { ProxyError } from "../errors/proxy-error.ts";
import { parseBody } from "../schemas/parse-body.ts";

/** Validates a parsed request body with a zod schema; the first problem becomes a 400 naming the field. */
export function validateBody<S extends z.ZodMiniType>(schema: S, body: unknown): z.output<S> {
  return parseBody(schema, body, { objectOnly: true, absentUnions: true });
}

/** A 400 for a parameter this endpoint understands but Switchyard cannot honour. */
export function unsupported(param: string, message: string): ProxyError {
  return new ProxyError({ status: 400, code: "unsupported_parameter", param, message });
}
