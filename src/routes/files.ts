// The Files API as the Batch API uses it: POST /v1/files (multipart, purpose "batch"), GET
// /v1/files, GET /v1/files/{id}, GET /v1/files/{id}/content, DELETE /v1/files/{id}. The bytes are in
// R2 (BATCH_FILES), the records in the caller's BatchStore: another key's file is a 404.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { batchStore } from "../batch/batch-owner.ts";
import type { FileRecord } from "../batch/batch-rows.ts";
import { loadConfig } from "../config/load-config.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { randomId } from "../lib/ids.ts";

/** Room for the multipart envelope around the file (boundaries, the purpose field, headers). */
const MULTIPART_SLACK = 64 * 1024;

function notFound(id: string): ProxyError {
  return new ProxyError({ status: 404, code: "not_found", param: "file_id", message: `No file with id '${id}' for your key (files are kept batch.retentionDays; GET /v1/files lists yours).` });
}

/** The File object as OpenAI's clients read it (the R2 key stays inside). */
export function publicFile(f: FileRecord) {
  const { r2Key: _r2Key, ...file } = f;
  return file;
}

export async function uploadFile(c: Context<AppEnv>): Promise<Response> {
  const { maxFileBytes, retentionDays } = loadConfig(c.env).batch;
  const tooLarge = () => new ProxyError({ status: 413, code: "file_too_large", param: "file", message: `The file is larger than ${maxFileBytes} bytes (batch.maxFileBytes): split its requests into several files.` });
  const length = Number(c.req.header("content-length") ?? "0");
  if (length > maxFileBytes + MULTIPART_SLACK) throw tooLarge();
  if (!(c.req.header("content-type") ?? "").toLowerCase().startsWith("multipart/form-data")) {
    throw new ProxyError({ status: 400, code: "invalid_request", message: "Upload a file as multipart/form-data with the fields `file` and `purpose` (\"batch\")." });
  }
  let form: FormData;
  try {
    form = await c.req.raw.formData();
  } catch {
    throw new ProxyError({ status: 400, code: "invalid_request", message: "The multipart body could not be read: send the fields `file` and `purpose`." });
  }
  const purpose = form.get("purpose");
  if (purpose !== "batch") throw new ProxyError({ status: 400, code: "invalid_value", param: "purpose", message: `purpose ${JSON.stringify(purpose)} is not supported here: Switchyard keeps files for the Batch API only (purpose "batch").` });
  const file = form.get("file");
  if (!file || typeof file === "string") throw new ProxyError({ status: 400, code: "missing_required_parameter", param: "file", message: "The multipart body has no `file` field with the JSONL of requests." });
  if (file.size > maxFileBytes) throw tooLarge();
  const now = Math.floor(Date.now() / 1000);
  const id = randomId("file-", 24);
  const record: FileRecord = { id, object: "file", bytes: file.size, created_at: now, expires_at: now + retentionDays * 86400, filename: (file as File).name || "batch.jsonl", purpose: "batch", status: "processed", status_details: null, r2Key: `files/${id}` };
  await c.env.BATCH_FILES.put(record.r2Key, await file.arrayBuffer(), { httpMetadata: { contentType: "application/jsonl" } });
  const added = await (await batchStore(c)).addFile(record);
  if ("error" in added) {
    await c.env.BATCH_FILES.delete(record.r2Key);
    throw new ProxyError({ status: added.error.status, code: added.error.code, message: added.error.message });
  }
  return c.json(publicFile(record));
}

export async function getFile(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param("id") ?? "";
  const file = await (await batchStore(c)).getFile(id);
  if (!file) throw notFound(id);
  return c.json(publicFile(file));
}

export async function fileContent(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param("id") ?? "";
  const file = await (await batchStore(c)).getFile(id);
  const object = file ? await c.env.BATCH_FILES.get(file.r2Key) : null;
  if (!object) throw notFound(id);
  return new Response(object.body, { headers: { "content-type": "application/jsonl", "content-length": String(object.size) } });
}

export async function deleteFile(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param("id") ?? "";
  if (!(await (await batchStore(c)).deleteFile(id))) throw notFound(id);
  return c.json({ id, object: "file", deleted: true });
}

export async function listFiles(c: Context<AppEnv>): Promise<Response> {
  const order = c.req.query("order") ?? "desc";
  if (order !== "asc" && order !== "desc") throw new ProxyError({ status: 400, code: "invalid_value", param: "order", message: "order must be asc or desc." });
  const limit = pageLimit(c.req.query("limit"), 10_000, 10_000);
  const after = c.req.query("after");
  const purpose = c.req.query("purpose");
  const page = await (await batchStore(c)).listFiles({ order, limit, ...(after ? { after } : {}), ...(purpose ? { purpose } : {}) });
  const data = page.data.map(publicFile);
  return c.json({ object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: page.has_more });
}

/** A list's `limit`: an integer from 1 to `max`, `fallback` when absent. */
export function pageLimit(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= max)) throw new ProxyError({ status: 400, code: "invalid_value", param: "limit", message: `limit must be an integer from 1 to ${max}.` });
  return n;
}
