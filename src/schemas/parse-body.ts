// Turns a schema's refusal of a request body into one 400 a client can act on: the field, the
// problem and the documented error code.
import type * as z from "zod/mini";
import { ProxyError } from "../errors/proxy-error.ts";
import { describeIssue, formatPath, valueAt } from "./describe-issues.ts";

/**
 * How an endpoint words and codes a body its schema refuses. The options keep each endpoint's
 * answers as they are documented and tested; the default is the plain case.
 */
export interface BodyHint {
  /** Named in the message: `Invalid ${subject}: …` ("request" unless said). */
  subject?: string;
  /** What to send instead, after the problem (`Send {tools, text, …}.`). */
  send?: string;
  /** A body that is not a JSON object is refused before the schema, in one sentence. */
  objectOnly?: boolean;
  /**
   * A union (`content`: a string or parts) reports one issue for the whole field. When exactly one of
   * its shapes took the value's outer type and failed inside it, that shape's issue names the field
   * that is wrong (`messages[0].content[0].text`), so that one is reported.
   */
  innermost?: boolean;
  /** A missing union-typed field (e.g. `input`) is reported as invalid_union: it is still missing, named in backticks. */
  absentUnions?: boolean;
  /**
   * Every problem but a missing field or a broken limit (a value too long or of the wrong form, such
   * as a tool name) is `invalid_type` (the tool-call rewrite's code).
   */
  typeOnly?: boolean;
}

/**
 * Issues that say a value breaks a limit, not that it has the wrong type: always `invalid_value`.
 * `custom` is what the request schemas' own checks raise (a tool schema nested too deep).
 */
const LIMIT_ISSUES = new Set<string>(["invalid_format", "too_big", "custom"]);

/**
 * Parses a request body with its zod schema; the first problem becomes a 400 naming the field, with
 * the codes of docs/api.md's Errors table: missing_required_parameter, invalid_type, invalid_value.
 */
export function parseBody<S extends z.ZodMiniType>(schema: S, body: unknown, hint: BodyHint = {}): z.output<S> {
  if (hint.objectOnly && (typeof body !== "object" || body === null || Array.isArray(body))) {
    throw new ProxyError({ status: 400, code: "invalid_type", message: "The request body must be a JSON object." });
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const first = parsed.error.issues[0]!;
  const issue = hint.innermost ? innermostIssue(first) : first;
  const described = describeIssue(issue, body);
  const missing = described.missing || (hint.absentUnions === true && issue.path.length > 0 && valueAt(body, issue.path) === undefined);
  const message = missing && hint.absentUnions ? `\`${formatPath(issue.path)}\` is required` : described.message;
  throw new ProxyError({
    status: 400,
    code: missing
      ? "missing_required_parameter"
      : (hint.typeOnly && !LIMIT_ISSUES.has(issue.code)) || issue.code === "invalid_type"
        ? "invalid_type"
        : "invalid_value",
    param: formatPath(issue.path) || null,
    message: `Invalid ${hint.subject ?? "request"}: ${message}.${hint.send ? ` ${hint.send}` : ""}`,
  });
}

function innermostIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  let current = issue;
  while (current.code === "invalid_union") {
    const branches: readonly z.core.$ZodIssue[][] = current.errors;
    const deeper = branches.filter((branch) => branch.length > 0 && branch[0]!.path.length > 0);
    if (deeper.length !== 1) break;
    const inner = deeper[0]![0]!;
    current = { ...inner, path: [...current.path, ...inner.path] };
  }
  return current;
}
