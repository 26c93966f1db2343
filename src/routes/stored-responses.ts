// Reading back and deleting stored Responses answers, each visible only to the key that stored it.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { responseOwner, responseStore, type InputItemsPage } from "../api/responses/index.ts";
import { ProxyError } from "../errors/proxy-error.ts";

// The stored side of the Responses API: GET and DELETE /v1/responses/{id} and its input_items, each
// looked up in the caller's own store (src/api/responses/response-owner.ts), so another key's id is
// a 404 like an id that never existed.

function notFound(id: string): ProxyError {
  return new ProxyError({ status: 404, code: "not_found", param: "response_id", message: `No response with id '${id}' is stored for your key (stored responses are kept 30 days; store: false ones never are).` });
}

async function store(c: Context<AppEnv>) {
  return responseStore(c.env, await responseOwner(c));
}

export async function getStoredResponse(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param("id") ?? "";
  if (c.req.query("stream") === "true") {
    throw new ProxyError({ status: 400, code: "unsupported_parameter", param: "stream", message: "Stored responses are kept only once finished, so there is no stream to replay; drop stream=true." });
  }
  const response = (await (await store(c)).get(id)) as Record<string, unknown> | null;
  if (!response) throw notFound(id);
  return c.json(response);
}

export async function deleteStoredResponse(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param("id") ?? "";
  if (!(await (await store(c)).delete(id))) throw notFound(id);
  return c.json({ id, object: "response.deleted", deleted: true });
}

export async function listInputItems(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param("id") ?? "";
  const order = c.req.query("order") ?? "desc";
  if (order !== "asc" && order !== "desc") throw new ProxyError({ status: 400, code: "invalid_value", param: "order", message: "order must be asc or desc." });
  const limitRaw = c.req.query("limit") ?? "20";
  const limit = /^\d+$/.test(limitRaw) ? Number(limitRaw) : NaN;
  if (!(limit >= 1 && limit <= 100)) throw new ProxyError({ status: 400, code: "invalid_value", param: "limit", message: "limit must be an integer from 1 to 100." });
  const after = c.req.query("after");
  const page = (await (await store(c)).inputItems(id, { order, limit, ...(after ? { after } : {}) })) as InputItemsPage | null;
  if (!page) throw notFound(id);
  const data = page.data;
  return c.json({ object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.has_more });
}
