import { ProxyError } from "../errors/proxy-error.ts";
import { describeIssue, formatPath } from "../config/describe-issues.ts";
import { ChatRequestSchema, type ChatRequest } from "./chat-request.ts";

/** Validates a parsed body before any upstream is touched; the first problem becomes a 400. */
export function validateChatRequest(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ProxyError({ status: 400, code: "invalid_type", message: "The request body must be a JSON object." });
  }
  const parsed = ChatRequestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
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
