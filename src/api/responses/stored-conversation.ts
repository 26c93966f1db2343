// Stored conversations for /v1/responses: previous_response_id and item_reference read back from
// the caller's stored responses, and each answer kept for the next turn.
import type { Context } from "hono";
import type { AppEnv } from "../../auth/app-env.ts";
import { ProxyError } from "../../errors/proxy-error.ts";
import type { ResponsesRequest } from "../../schemas/responses-request.ts";
import { RETENTION_DAYS } from "./response-store.ts";
import { inputItemsOf } from "./input-items.ts";
import { responseOwner, responseStore } from "./response-owner.ts";

type Json = Record<string, unknown>;

/** A Responses request with its stored context resolved, and how to keep its answer. */
export interface StoredContext {
  /** The request to convert: earlier turns prepended, item references replaced, no previous_response_id. */
  request: ResponsesRequest;
  /** This turn's own input items (ids assigned), as `input_items` lists them. */
  inputItems: Json[];
  store: boolean;
  /** Keeps the finished response (awaited before its last byte, so a chained next turn finds it). */
  save(response: Json): Promise<string | null>;
}

/**
 * Resolves `previous_response_id` (the earlier turns' items, in order; `instructions` are not carried
 * over, as OpenAI defines it) and `item_reference` input items from the caller's own stored
 * responses. Storage is only touched when the request uses it or asks to be stored (`store`, default
 * true).
 */
export async function resolveStoredContext(c: Context<AppEnv>, request: ResponsesRequest): Promise<StoredContext> {
  const store = request.store !== false;
  const inputItems = inputItemsOf(request.input as string | Json[]);
  const previous = request.previous_response_id ?? null;
  const needsStore = store || previous !== null || inputItems.some((i) => i.type === "item_reference");
  if (!needsStore) return { request, inputItems, store, save: async () => null };

  const owner = await responseOwner(c);
  const stub = responseStore(c.env, owner);
  let history: Json[] = [];
  if (previous !== null) {
    const found = (await stub.conversation(previous)) as Json[] | null;
    if (!found) {
      throw new ProxyError({
        status: 400,
        code: "previous_response_not_found",
        param: "previous_response_id",
        message: `Previous response with id '${previous}' not found. Responses are kept ${RETENTION_DAYS} days, per key; one stored with store: false, by another key, or deleted cannot be continued.`,
      });
    }
    history = found;
  }
  const resolved: Json[] = [];
  for (const [i, item] of inputItems.entries()) {
    if (item.type !== "item_reference") {
      resolved.push(item);
      continue;
    }
    const found = typeof item.id === "string" ? ((await stub.item(item.id)) as Json | null) : null;
    if (!found) {
      throw new ProxyError({ status: 400, code: "item_not_found", param: `input[${i}].id`, message: `Item with id '${String(item.id)}' not found among your stored responses.` });
    }
    resolved.push(found);
  }
  const { previous_response_id: _dropped, ...rest } = request;
  return {
    request: { ...rest, input: [...history, ...resolved] as ResponsesRequest["input"] },
    inputItems: resolved,
    store,
    save: async (response) => {
      if (!store) return null;
      const id = String(response.id);
      return (await stub.save({ id, createdAt: Date.now(), previousResponseId: previous, inputItems: resolved, response })) as string | null;
    },
  };
}
