import { ProxyError } from "../../errors/proxy-error.ts";
import { describeIssue, formatPath } from "../../schemas/describe-issues.ts";
import { ChatRequestSchema, type ChatRequest } from "../../schemas/chat-request.ts";

/** Validates a parsed body before any upstream is touched; the first problem becomes a 400. */
export function validateChatRequest(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ProxyError({ status: 400, code: "invalid_type", message: "The request body must be a JSON object." });
  }
  const parsed = ChatRequestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = innermostIssue(parsed.error.issues[0]!);
    const { message, missing } = describeIssue(issue as never, body);
    throw new ProxyError({
      status: 400,
      code: missing ? "missing_required_parameter" : issue.code === "invalid_type" ? "invalid_type" : "invalid_value",
      param: formatPath(issue.path) || null,
      message: `Invalid request: ${message}.`,
    });
  }
  const req = parsed.data;
  if (req.n != null && req.n !== 1) {
    throw new ProxyError({ status: 400, code: "unsupported_parameter", param: "n", message: "Only n=1 is supported; send one request per completion." });
  }
  if (req.stream_options && !req.stream) {
    throw new ProxyError({ status: 400, code: "invalid_value", param: "stream_options", message: "stream_options is only allowed when stream is true." });
  }
  return req;
}

interface Issue {
  code: string;
  path: PropertyKey[];
  errors?: Issue[][];
}

/**
 * A union (`content`: a string or parts) reports one issue for the whole field. When exactly one of
 * its shapes took the value's outer type and failed inside it, that shape's issue names the field
 * that is wrong (`messages[0].content[0].text`), so that one is reported.
 */
function innermostIssue<T extends Issue>(issue: T): T {
  let current: Issue = issue;
  while (current.code === "invalid_union" && current.errors) {
    const deeper = current.errors.filter((branch) => branch.length > 0 && branch[0]!.path.length > 0);
    if (deeper.length !== 1) break;
    const inner = deeper[0]![0]!;
    current = { ...inner, path: [...current.path, ...inner.path] };
  }
  return current as T;
}
