import { describeIssue, formatPath, valueAt } from "../schemas/describe-issues.ts";
import { ProxyError } from "../errors/proxy-error.ts";

interface SafeParser<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: ReadonlyArray<{ code: string; path: PropertyKey[] }> } };
}

/** Validates a parsed request body with a zod schema; the first problem becomes a 400 naming the field. */
export function validateBody<T>(schema: SafeParser<T>, body: unknown): T {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ProxyError({ status: 400, code: "invalid_type", message: "The request body must be a JSON object." });
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const described = describeIssue(issue as never, body);
  // A missing union-typed field (e.g. `input`) is reported as invalid_union: it is still missing.
  const missing = described.missing || (issue.path.length > 0 && valueAt(body, issue.path) === undefined);
  const message = missing ? `\`${formatPath(issue.path)}\` is required` : described.message;
  throw new ProxyError({
    status: 400,
    code: missing ? "missing_required_parameter" : issue.code === "invalid_type" ? "invalid_type" : "invalid_value",
    param: formatPath(issue.path) || null,
    message: `Invalid request: ${message}.`,
  });
}

/** A 400 for a parameter this endpoint understands but Switchyard cannot honour. */
export function unsupported(param: string, message: string): ProxyError {
  return new ProxyError({ status: 400, code: "unsupported_parameter", param, message });
}
