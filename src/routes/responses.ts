import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import { convertResponsesRequest } from "../api/responses/convert-request.ts";
import { ResponseEncoder } from "../api/responses/response-encoder.ts";
import { echoedFields } from "../api/responses/echoed-fields.ts";
import { validateBody } from "../api/validate-body.ts";
import { loadConfig } from "../config/load-config.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { startChat } from "../routing/start-chat.ts";
import { ResponsesRequestSchema } from "../schemas/responses-request.ts";
import { framedSse, gathered, namedFrame } from "../stream/event-encoder.ts";
import { jsonResponse } from "../stream/json-response.ts";
import { randomId } from "../stream/random-id.ts";
import { sseResponse } from "../stream/sse-response.ts";

/** `POST /v1/responses` (OpenAI Responses API), stream and non-stream, over the chat pipeline. */
export async function responses(c: Context<AppEnv>): Promise<Response> {
  const config = loadConfig(c.env);
  const request = validateBody(ResponsesRequestSchema, await readJsonBody(c.req.raw, config.limits.maxBodyBytes));
  const run = startChat(c, config, convertResponsesRequest(request));
  const meta = { id: randomId("resp_"), createdAt: Math.floor(Date.now() / 1000), model: request.model, echo: echoedFields(request) };
  const encoder = new ResponseEncoder(meta, () => run.extension());
  // Responses framing: `event: <type>` and `data: <event>`, no `[DONE]`.
  if (request.stream) return sseResponse({ ...run.common, encoder: framedSse(encoder, namedFrame) });
  return jsonResponse({
    ...run.common,
    aggregator: gathered(encoder),
    result: () => (encoder.end(), encoder.response()),
    // A failure after the 200 was committed: a `status: "failed"` response with its `error`.
    errorBody: (e) => encoder.failedResponse(e),
  });
}
