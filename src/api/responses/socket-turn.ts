// The Responses API over a WebSocket (what Codex opens first on its built-in provider): what one
// client message asks for, and the conversation a socket carries from one response to the next.
import { inputItemsOf } from "./input-items.ts";
import { utf8Bytes } from "./utf8-bytes.ts";

type Json = Record<string, unknown>;

/** A client message, read: a response to create (or only to prepare, `generate: false`), one to ignore, or a refusal. */
export type SocketMessage =
  | { kind: "create"; body: Json; generate: boolean }
  | { kind: "ignore" }
  | { kind: "invalid"; message: string; param?: string };

/**
 * Pure: `{"type": "response.create", …fields of a POST /v1/responses body}` (the fields may also be
 * nested under `response`, as OpenAI's Realtime API has them). `response.processed` acknowledgements
 * need no answer.
 */
export function readSocketMessage(text: string): SocketMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: "invalid", message: "A WebSocket message must be one JSON object, e.g. {\"type\": \"response.create\", \"model\": …, \"input\": …}." };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { kind: "invalid", message: "A WebSocket message must be a JSON object." };
  const { type, generate, response, ...fields } = parsed as Json;
  if (type === "response.processed") return { kind: "ignore" };
  if (type !== "response.create") {
    return { kind: "invalid", param: "type", message: `Unknown message type ${JSON.stringify(type)}; send "response.create".` };
  }
  if (generate !== undefined && typeof generate !== "boolean") return { kind: "invalid", param: "generate", message: "generate must be a boolean." };
  const nested = typeof response === "object" && response !== null && !Array.isArray(response) ? (response as Json) : {};
  // Every answer on a socket streams: the socket is the stream.
  return { kind: "create", body: { ...nested, ...fields, stream: true }, generate: generate !== false };
}

/**
 * What a socket remembers of its last response: its id and the whole conversation through it, kept
 * as JSON text (so what it holds is its size in bytes, whatever the items' shape) with that size in
 * UTF-8 bytes; `itemsJson` null when the conversation outgrew the body limit (it is not kept: a
 * response chained to it could not be sent).
 */
export interface SocketChain {
  id: string;
  itemsJson: string | null;
  bytes: number;
}

/**
 * Pure: the body to send for a `response.create` on a socket whose last response is `last`. Chained
 * to it by `previous_response_id`, the body carries the whole conversation itself (so it holds with
 * `store: false`, as Codex sends); chained to anything else, it is sent as it is (a stored response,
 * or an id the route refuses as unknown).
 */
export function chainedBody(body: Json, last: SocketChain | null): Json {
  if (!chainsTo(body, last) || last!.itemsJson === null) return body;
  const { previous_response_id: _chained, ...rest } = body;
  return { ...rest, input: [...(JSON.parse(last!.itemsJson) as Json[]), ...inputItemsOf(inputOf(body))] };
}

/** Pure: whether `body` continues the socket's own last response (rather than a stored one, or none). */
export function chainsTo(body: Json, last: SocketChain | null): boolean {
  return last !== null && typeof body.previous_response_id === "string" && body.previous_response_id === last.id;
}

/** Pure: the conversation through a response: what was sent, then what the response output; not kept past `maxBytes`. */
export function chainAfter(id: string, sent: Json, output: readonly Json[], maxBytes: number): SocketChain {
  const itemsJson = JSON.stringify([...inputItemsOf(inputOf(sent)), ...output]);
  const bytes = utf8Bytes(itemsJson);
  return { id, itemsJson: bytes > maxBytes ? null : itemsJson, bytes };
}

function inputOf(body: Json): string | Json[] {
  const input = body.input;
  if (typeof input === "string") return input;
  return Array.isArray(input) ? (input.filter((item) => typeof item === "object" && item !== null) as Json[]) : [];
}
