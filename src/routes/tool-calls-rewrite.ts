// POST /v1/tool_calls/rewrite: the tool-call engine without a model, so a client can turn text it
// already has into scored tool calls.
import type { Context } from "hono";
import * as z from "zod/mini";
import type { AppEnv } from "../auth/app-env.ts";
import { loadConfig } from "../config/load-config.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { ToolChoiceSchema, ToolsSchema } from "../schemas/chat-request.ts";
import { parseBody } from "../schemas/parse-body.ts";
import { MAX_REWRITE_TEXT_LENGTH } from "../schemas/tool-limits.ts";
import { rewriteToolCalls, type ToolDefinition } from "../toolcalls/index.ts";

// The text, the number of tools and their schemas are bounded (src/schemas/tool-limits.ts,
// docs/security.md's Limits): the endpoint runs the parser on whatever a client sends. The tools
// are chat's, with chat's limits on their count and schemas.
const RewriteRequestSchema = z.looseObject({
  tools: ToolsSchema,
  text: z.string().check(z.maxLength(MAX_REWRITE_TEXT_LENGTH)),
  tool_choice: z.optional(z.nullable(ToolChoiceSchema)),
  parallel_tool_calls: z.optional(z.nullable(z.boolean())),
  finish_reason: z.optional(z.nullable(z.enum(["stop", "length"]))),
});

/**
 * `POST /v1/tool_calls/rewrite`: the chat path's tool-call engine on its own — model text in,
 * `{content, reasoning_content?, tool_calls: [{id, type, function, score, problems}]}` out.
 */
export async function rewriteToolCallsRoute(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const body = await readJsonBody(c.req.raw, config.limits.maxBodyBytes);
  const req = parseBody(RewriteRequestSchema, body, { typeOnly: true, send: "Send {tools, text, tool_choice?, parallel_tool_calls?, finish_reason?}." });
  const result = rewriteToolCalls({
    tools: req.tools as ToolDefinition[],
    text: req.text,
    ...(req.tool_choice ? { tool_choice: req.tool_choice } : {}),
    ...(req.parallel_tool_calls != null ? { parallel_tool_calls: req.parallel_tool_calls } : {}),
    ...(req.finish_reason ? { finish_reason: req.finish_reason } : {}),
  });
  return c.json(result);
}
