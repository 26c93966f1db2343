// POST /v1/responses/compact: a conversation shrunk to its user messages and one sealed summary,
// so an agent can go on in less context.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { compactedResponse, compactionRequest } from "../api/responses/compact-conversation.ts";
import { convertResponsesRequest } from "../api/responses/convert-request.ts";
import { inputItemsOf } from "../api/responses/input-items.ts";
import { usageJson } from "../api/responses/response-encoder.ts";
import { resolveStoredContext } from "../api/responses/stored-conversation.ts";
import { validateBody } from "../api/validate-body.ts";
import { loadConfig } from "../config/load-config.ts";
import { callerSealer } from "../api/responses/seal-key.ts";
import { runChat } from "../routing/pipeline.ts";
import { readRequestBody, requestScope } from "./request-scope.ts";
import { ResponsesRequestSchema } from "../schemas/responses-request.ts";
import type { Usage } from "../events/events.ts";
import type { ErrorInfo } from "../errors/proxy-error.ts";
import { jsonResponse } from "../responders/json-response.ts";

/**
 * `POST /v1/responses/compact`: the model summarizes the conversation (the input, or a stored chain
 * by `previous_response_id`), and the answer is OpenAI's compacted response — the user messages, then
 * one `compaction` item sealed with the deployment's key. Sent back as input, that item reaches the
 * model as the summary (src/api/responses/compaction-item.ts). Never stored.
 */
export async function compactResponses(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const sent = validateBody(ResponsesRequestSchema, await readRequestBody(c, config.limits.maxBodyBytes));
  const stored = await resolveStoredContext(c, { ...sent, store: false, stream: false });
  const sealer = await callerSealer(c);
  const converted = convertResponsesRequest(stored.request, sealer);
  const run = runChat(requestScope(c), config, compactionRequest(converted.chat));
  let summary = "";
  let usage: Usage | null = null;
  let failed: ErrorInfo | null = null;
  return jsonResponse({
    ...run.common,
    aggregator: {
      push(event) {
        if (event.type === "text") summary += event.delta;
        else if (event.type === "usage") usage = event.usage;
        else if (event.type === "error") failed = event.error;
      },
      get failed() {
        return failed;
      },
    },
    result: () => ({ ...compactedResponse(inputItemsOf(stored.request.input), summary.trim(), sealer, usageJson(usage)), x_switchyard: run.extension() }),
  });
}
