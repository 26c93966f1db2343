// The Batch API: POST /v1/batches, GET /v1/batches (paged), GET /v1/batches/{id}, POST
// /v1/batches/{id}/cancel, each in the caller's own BatchStore (another key's batch is a 404). The
// lines run on idle capacity (src/batch/batch-store.ts); docs/api.md, "Batches".
import type { Context } from "hono";
import * as z from "zod/mini";
import type { AppEnv } from "../auth/app-env.ts";
import { batchStore } from "../batch/batch-owner.ts";
import { BATCH_ENDPOINTS, isBatchEndpoint } from "../batch/batch-lines.ts";
import { windowSeconds } from "../batch/batch-object.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { readJsonBody } from "../http/read-json-body.ts";
import { parseBody } from "../schemas/parse-body.ts";
import { pageLimit } from "./files.ts";

const CreateBatchSchema = z.object({
  input_file_id: z.string().check(z.minLength(1), z.maxLength(128)),
  endpoint: z.string(),
  completion_window: z.string(),
  // OpenAI's metadata: up to 16 pairs, keys up to 64 characters, values up to 512.
  metadata: z.optional(z.nullable(z.record(z.string().check(z.maxLength(64)), z.string().check(z.maxLength(512))))),
});

function notFound(id: string): ProxyError {
  return new ProxyError({ status: 404, code: "not_found", param: "batch_id", message: `No batch with id '${id}' for your key (GET /v1/batches lists yours).` });
}

export async function createBatch(c: Context<AppEnv>): Promise<Response> {
  const input = parseBody(CreateBatchSchema, await readJsonBody(c.req.raw, 64 * 1024), { subject: "batch", send: `Send {input_file_id, endpoint: ${BATCH_ENDPOINTS.map((e) => `"${e}"`).join("|")}, completion_window: "24h", metadata?}.` });
  if (!isBatchEndpoint(input.endpoint)) throw new ProxyError({ status: 400, code: "invalid_value", param: "endpoint", message: `endpoint ${JSON.stringify(input.endpoint)} cannot be batched here; use one of ${BATCH_ENDPOINTS.join(", ")}.` });
  if (windowSeconds(input.completion_window) === null) throw new ProxyError({ status: 400, code: "invalid_value", param: "completion_window", message: `completion_window ${JSON.stringify(input.completion_window)} is not "24h" or a shorter window such as "30m" or "90s".` });
  if (input.metadata && Object.keys(input.metadata).length > 16) throw new ProxyError({ status: 400, code: "invalid_value", param: "metadata", message: "metadata holds at most 16 pairs." });
  const key = c.get("principal");
  const created = await (await batchStore(c)).createBatch({
    keyId: key?.id ?? null,
    allowed: key?.models ?? null,
    input_file_id: input.input_file_id,
    endpoint: input.endpoint,
    completion_window: input.completion_window,
    metadata: input.metadata ?? null,
  });
  if ("error" in created) throw new ProxyError({ status: created.error.status, code: created.error.code, message: created.error.message, ...(created.error.param ? { param: created.error.param } : {}) });
  return c.json(created);
}

export async function getBatch(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param("id") ?? "";
  const batch = await (await batchStore(c)).getBatch(id);
  if (!batch) throw notFound(id);
  return c.json(batch);
}

export async function listBatches(c: Context<AppEnv>): Promise<Response> {
  const limit = pageLimit(c.req.query("limit"), 20, 100);
  const after = c.req.query("after");
  const page = await (await batchStore(c)).listBatches({ limit, ...(after ? { after } : {}) });
  const data = page.data;
  return c.json({ object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.has_more });
}

export async function cancelBatch(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param("id") ?? "";
  const batch = await (await batchStore(c)).cancelBatch(id);
  if (!batch) throw notFound(id);
  return c.json(batch);
}
