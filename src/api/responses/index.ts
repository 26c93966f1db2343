// The door of OpenAI's Responses API (what Codex speaks): POST /v1/responses and /v1/responses/compact
// over the chat pipeline, with stored conversations (previous_response_id) and sealed reasoning and
// compaction; and what the other Responses routes use of it (the stored responses, the WebSocket's
// turns) and the ResponseStore Durable Object.
import type { Usage } from "../../events/events.ts";
import type { ErrorInfo } from "../../errors/proxy-error.ts";
import { randomId } from "../../lib/ids.ts";
import { framedSse, gathered, namedFrame } from "../../responders/event-encoder.ts";
import { ResponsesRequestSchema, type ResponsesRequest } from "../../schemas/responses-request.ts";
import type { GeneratingApi } from "../door.ts";
import { bodyTier } from "../service-tier.ts";
import { validateBody } from "../validate-body.ts";
import { compactedResponse, compactionRequest } from "./compact-conversation.ts";
import { CompactionEncoder } from "./compaction-encoder.ts";
import { compactionTriggered, withoutTriggers } from "./compaction-trigger.ts";
import { convertResponsesRequest, needsSealer } from "./convert-request.ts";
import { echoedFields } from "./echoed-fields.ts";
import { inputItemsOf } from "./input-items.ts";
import { ResponseEncoder, usageJson } from "./response-encoder.ts";
import { callerSealer } from "./seal-key.ts";
import { resolveStoredContext } from "./stored-conversation.ts";

export { ResponseStore, type InputItemsPage } from "./response-store.ts";
export { responseOwner, responseStore } from "./response-owner.ts";
export { sealerFor } from "./seal-key.ts";
export { usageJson } from "./response-encoder.ts";
export { chainAfter, chainedBody, chainsTo, readSocketMessage, type SocketChain } from "./socket-turn.ts";
export { SendPace } from "./socket-pace.ts";
export { utf8Bytes } from "./utf8-bytes.ts";

const validate = (body: unknown): ResponsesRequest => validateBody(ResponsesRequestSchema, body);

/**
 * `POST /v1/responses` (OpenAI Responses API), stream and non-stream, over the chat pipeline. Stored
 * responses (`store`, default true) are kept per key and continue with `previous_response_id`
 * (stored-conversation.ts); a stored answer is saved before its last byte leaves.
 */
export const responsesApi: GeneratingApi<ResponsesRequest> = {
  validate,
  async open(sent, c) {
    const tier = bodyTier(sent);
    const stored = await resolveStoredContext(c, sent);
    // Compaction v2: a last `compaction_trigger` item asks for the conversation as one sealed summary.
    const compacting = compactionTriggered(stored.request);
    const request = compacting ?? withoutTriggers(stored.request);
    const sealer = compacting || needsSealer(request) ? await callerSealer(c) : undefined;
    const converted = convertResponsesRequest(request, sealer);
    return {
      chat: compacting ? { ...compactionRequest(converted.chat), stream: converted.chat.stream } : converted.chat,
      tier,
      encode(run, served) {
        const echo = { ...echoedFields(sent), service_tier: served, store: stored.store, previous_response_id: sent.previous_response_id ?? null };
        const meta = { id: randomId("resp_"), createdAt: Math.floor(Date.now() / 1000), model: sent.model, echo, ...converted.encoding };
        const response = new ResponseEncoder(meta, () => ({ ...run.extension(), ...converted.extension }));
        const encoder = compacting && sealer ? new CompactionEncoder(response, sealer) : response;
        const save = async () => {
          const problem = await stored.save(response.response()).catch((e: unknown) => String(e));
          if (problem) console.warn(`[responses] ${meta.id} was not stored: ${problem}`);
        };
        // Responses framing: `event: <type>` and `data: <event>`, no `[DONE]`.
        if (sent.stream) return { encoder: framedSse(encoder, namedFrame, "", save) };
        return {
          aggregator: gathered(encoder),
          result: async () => {
            encoder.end();
            await save();
            return response.response();
          },
          // A failure after the 200 was committed: a `status: "failed"` response with its `error`.
          errorBody: (e) => response.failedResponse(e),
        };
      },
    };
  },
};

/**
 * `POST /v1/responses/compact`: the model summarizes the conversation (the input, or a stored chain
 * by `previous_response_id`), and the answer is OpenAI's compacted response — the user messages, then
 * one `compaction` item sealed with the deployment's key. Sent back as input, that item reaches the
 * model as the summary (compaction-item.ts). Never stored, never streamed.
 */
export const compactApi: GeneratingApi<ResponsesRequest> = {
  validate,
  async open(sent, c) {
    const stored = await resolveStoredContext(c, { ...sent, store: false, stream: false });
    const sealer = await callerSealer(c);
    const converted = convertResponsesRequest(stored.request, sealer);
    return {
      chat: compactionRequest(converted.chat),
      encode(run) {
        let summary = "";
        let usage: Usage | null = null;
        let failed: ErrorInfo | null = null;
        return {
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
        };
      },
    };
  },
};
