// POST /v1/responses, OpenAI's Responses API (what Codex speaks), served by the chat pipeline.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { convertResponsesRequest, needsSealer } from "../api/responses/convert-request.ts";
import { ResponseEncoder } from "../api/responses/response-encoder.ts";
import { echoedFields } from "../api/responses/echoed-fields.ts";
import { compactionRequest } from "../api/responses/compact-conversation.ts";
import { CompactionEncoder } from "../api/responses/compaction-encoder.ts";
import { compactionTriggered, withoutTriggers } from "../api/responses/compaction-trigger.ts";
import { resolveStoredContext } from "../api/responses/stored-conversation.ts";
import { validateBody } from "../api/validate-body.ts";
import { loadConfig } from "../config/load-config.ts";
import { callerSealer } from "../api/responses/seal-key.ts";
import { runChat } from "../routing/pipeline.ts";
import { bodyTier, readRequestBody, reportedTier, requestScope } from "./request-scope.ts";
import { ResponsesRequestSchema } from "../schemas/responses-request.ts";
import { framedSse, gathered, namedFrame } from "../responders/event-encoder.ts";
import { jsonResponse } from "../responders/json-response.ts";
import { randomId } from "../lib/ids.ts";
import { sseResponse } from "../responders/sse-response.ts";

/**
 * `POST /v1/responses` (OpenAI Responses API), stream and non-stream, over the chat pipeline. Stored
 * responses (`store`, default true) are kept per key and continue with `previous_response_id`
 * (src/api/responses/stored-conversation.ts); a stored answer is saved before its last byte leaves.
 */
export async function responses(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const sent = validateBody(ResponsesRequestSchema, await readRequestBody(c, config.limits.maxBodyBytes));
  const stored = await resolveStoredContext(c, sent);
  // Compaction v2: a last `compaction_trigger` item asks for the conversation as one sealed summary.
  const compacting = compactionTriggered(stored.request);
  const request = compacting ?? withoutTriggers(stored.request);
  const sealer = compacting || needsSealer(request) ? await callerSealer(c) : undefined;
  const converted = convertResponsesRequest(request, sealer);
  const chat = compacting ? { ...compactionRequest(converted.chat), stream: converted.chat.stream } : converted.chat;
  const scope = requestScope(c, bodyTier(sent as { service_tier?: unknown }));
  const run = runChat(scope, config, chat);
  const echo = { ...echoedFields(sent), service_tier: reportedTier(scope), store: stored.store, previous_response_id: sent.previous_response_id ?? null };
  const meta = { id: randomId("resp_"), createdAt: Math.floor(Date.now() / 1000), model: sent.model, echo, ...converted.encoding };
  const response = new ResponseEncoder(meta, () => ({ ...run.extension(), ...converted.extension }));
  const encoder = compacting && sealer ? new CompactionEncoder(response, sealer) : response;
  const save = async () => {
    const problem = await stored.save(response.response()).catch((e: unknown) => String(e));
    if (problem) console.warn(`[responses] ${meta.id} was not stored: ${problem}`);
  };
  // Responses framing: `event: <type>` and `data: <event>`, no `[DONE]`.
  if (sent.stream) return sseResponse({ ...run.common, encoder: framedSse(encoder, namedFrame, "", save) });
  return jsonResponse({
    ...run.common,
    aggregator: gathered(encoder),
    result: async () => {
      encoder.end();
      await save();
      return response.response();
    },
    // A failure after the 200 was committed: a `status: "failed"` response with its `error`.
    errorBody: (e) => response.failedResponse(e),
  });
}
