// Compaction v2 (what Codex sends on its built-in provider): a Responses request whose last input item
// is `{"type": "compaction_trigger"}` asks for one `compaction` item in place of an answer.
import type { ResponsesRequest } from "../../schemas/responses-request.ts";

const TRIGGER = "compaction_trigger";

/**
 * Pure: the request without its trigger items when its last input item is a trigger (the
 * conversation to compact), else null. Triggers earlier in the input asked for a compaction that was
 * already answered: they are dropped either way (`withoutTriggers`).
 */
export function compactionTriggered(request: ResponsesRequest): ResponsesRequest | null {
  const input = request.input;
  if (typeof input === "string" || input.length === 0 || input[input.length - 1]!.type !== TRIGGER) return null;
  return withoutTriggers(request);
}

/** Pure: the request with every `compaction_trigger` item left out. */
export function withoutTriggers(request: ResponsesRequest): ResponsesRequest {
  if (typeof request.input === "string" || !request.input.some((item) => item.type === TRIGGER)) return request;
  return { ...request, input: request.input.filter((item) => item.type !== TRIGGER) };
}
