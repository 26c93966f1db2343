// /v1/responses on the chat pipeline: a Responses request turned into the chat request Switchyard
// runs, and what its encoder needs to answer in Responses terms.
import type { Sealer } from "./sealer.ts";
import type { ChatMessage, ChatRequest } from "../../schemas/chat-request.ts";
import type { ResponsesRequest } from "../../schemas/responses-request.ts";
import type { SwitchyardExtension } from "../../events/switchyard-extension.ts";
import { unsupported } from "../validate-body.ts";
import { convertInputItems } from "./convert-input-items.ts";
import { convertToolChoice } from "./convert-tool-choice.ts";
import { flattenTools } from "./flatten-tools.ts";
import type { ToolNames } from "./tool-origin.ts";

type Json = Record<string, unknown>;

/**
 * Responses-only fields: converted below or meaningless to llama.cpp (storage, caching and tiering
 * hints, client bookkeeping), so never forwarded.
 */
const RESPONSES_ONLY = [
  "input", "instructions", "max_output_tokens", "text", "previous_response_id", "store", "background",
  "background_options", "conversation", "metadata", "client_metadata", "include", "truncation", "reasoning",
  "prompt", "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention", "safety_identifier",
  "service_tier", "stream_options", "max_tool_calls", "top_logprobs", "user", "tools", "tool_choice",
  "context_management", "moderation", "access_programs",
];

export interface ConvertedResponsesRequest {
  chat: ChatRequest;
  /** What the encoder needs to answer in Responses terms. */
  encoding: {
    /** The model's tool names → the client's tools (namespaces, custom tools, local_shell). */
    tools: ToolNames;
    /** Set when the client included `reasoning.encrypted_content`: seals each reasoning item. */
    sealer?: Sealer;
  };
  /** Added to the response's `x_switchyard`: the hosted tools the model was not offered. */
  extension: Pick<SwitchyardExtension, "dropped_tools">;
}

/** Whether converting or answering this request needs the deployment's sealer. */
export function needsSealer(req: ResponsesRequest): boolean {
  return wantsEncryptedReasoning(req) || (Array.isArray(req.input) && req.input.some((item) => typeof item.encrypted_content === "string"));
}

function wantsEncryptedReasoning(req: ResponsesRequest): boolean {
  return req.include?.includes("reasoning.encrypted_content") === true;
}

/**
 * Pure: a Responses request → the chat request the pipeline runs. Unknown fields (llama.cpp's
 * `top_k`, `grammar`, …) are kept; hosted tools are left out (and reported); what cannot be honoured
 * without stored conversations is refused with a 400 that says what to send instead. `sealer` opens
 * the reasoning and compaction tokens this deployment gave out.
 */
export function convertResponsesRequest(req: ResponsesRequest, sealer?: Sealer): ConvertedResponsesRequest {
  if (req.previous_response_id) {
    throw unsupported(
      "previous_response_id",
      "previous_response_id was not resolved from stored responses. Send the whole conversation in `input` (the earlier output items, function_call and function_call_output included).",
    );
  }
  if (req.conversation != null) throw unsupported("conversation", "Switchyard keeps no conversation objects. Send the whole conversation in `input`, or chain turns with previous_response_id.");
  if (req.background) throw unsupported("background", "Background responses need stored responses, which Switchyard does not keep. Use stream: true for long answers.");

  const rest: Json = { ...req };
  for (const key of RESPONSES_ONLY) delete rest[key];

  const flat = flattenTools(req.tools);
  const messages: ChatMessage[] = [];
  if (req.instructions) messages.push({ role: "system", content: req.instructions });
  if (typeof req.input === "string") messages.push({ role: "user", content: req.input });
  else messages.push(...convertInputItems(req.input, { names: flat.names, sealer }));
  if (messages.length === 0) throw unsupported("input", "The input has no messages; send at least one.");

  const chat: ChatRequest = { ...rest, model: req.model, messages, stream: req.stream ?? false };
  if (req.max_output_tokens != null) chat.max_tokens = req.max_output_tokens;
  const { tools, toolChoice } = convertToolChoice(req.tool_choice, flat);
  if (tools.length) chat.tools = tools;
  if (toolChoice) chat.tool_choice = toolChoice;
  // Token logprobs come only when asked for with `include` (as from OpenAI); top_logprobs says how
  // many alternatives each carries.
  if (req.include?.includes("message.output_text.logprobs")) {
    (chat as Json).logprobs = true;
    if (req.top_logprobs) (chat as Json).top_logprobs = req.top_logprobs;
  }
  const format = req.text?.format;
  if (format && format.type === "json_schema") {
    if (!format.schema) throw unsupported("text.format.schema", "text.format of type json_schema needs a `schema`.");
    chat.response_format = {
      type: "json_schema",
      json_schema: { name: format.name ?? "response", schema: format.schema, ...(format.strict != null ? { strict: format.strict } : {}) },
    };
  } else if (format && format.type === "json_object") {
    chat.response_format = { type: "json_object" };
  } else if (format && format.type !== "text") {
    throw unsupported("text.format.type", `text.format type "${format.type}" is not supported; use text, json_schema or json_object.`);
  }
  return {
    chat,
    encoding: { tools: flat.names, ...(sealer && wantsEncryptedReasoning(req) ? { sealer } : {}) },
    extension: flat.dropped.length ? { dropped_tools: flat.dropped } : {},
  };
}
