// The Responses API over a WebSocket (what Codex opens first on its built-in provider): what one
// client message asks for, and the conversation a socket carries from one response to the next.
import { inputItemsOf } from "./input-items.ts";

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

/** What a socket remembers of its last response: its id and the whole conversation through it. */
export interface SocketChain {
  id: string;
  items: Json[];
}

/**
 * Pure: the body to send for a `response.create` on a socket whose last response is `last`. Chained
 * to it by `previous_response_id`, the body carries the whole conversation itself (so it holds with
 * `store: false`, as Codex sends); chained to anything else, it is sent as it is (a stored response,
 * or an id the route refuses as unknown).
 */
export function chainedBody(body: Json, last: SocketChain | null): Json {
  const previous = body.previous_response_id;
  if (last === null || typeof previous !== "string" || previous !== last.id) return body;
  const { previous_response_id: _chained, ...rest } = body;
  return { ...rest, input: [...last.items, ...inputItemsOf(inputOf(body))] };
}

/** Pure: the conversation through a response: what was sent, then what the response output. */
export function chainAfter(id: string, sent: Json, output: readonly Json[]): SocketChain {
  return { id, items: [...inputItemsOf(inputOf(sent)), ...output.map((item) => ({ ...item }))] };
}

function inputOf(body: Json): string | Json[] {
  const input = body.input;
  if (typeof input === "string") return input;
  return Array.isArray(input) ? (input.filter((item) => typeof item === "object" && item !== null) as Json[]) : [];
}
