import type { Context } from "hono";
import * as z from "zod/mini";
import type { AppEnv } from "../auth/app-env.ts";
import { loadConfig } from "../config/load-config.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { ToolChoiceSchema, ToolSchema } from "../schemas/chat-request.ts";
import { parseBody } from "../schemas/parse-body.ts";
import { rewriteToolCalls, type ToolDefinition } from "../toolcalls/index.ts";

const RewriteRequestSchema = z.looseObject({
  tools: z.array(ToolSchema),
  text: z.string(),
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
