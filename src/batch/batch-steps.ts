// A batch's two steps around its lines' run: validation (its input file read line by line from R2
// into its lines, or the batch `failed` with `errors` when no line is valid) and its end (the lines
// not run marked, the output and error files written to R2, its final status).
import { randomId } from "../lib/ids.ts";
import { advance, problemLine, unrunLine, type Batch } from "./batch-object.ts";
import { readBatchLines } from "./batch-lines.ts";
import type { BatchMeta, BatchRows, FileRecord } from "./batch-rows.ts";

/** The most validation errors a failed batch lists in its `errors` (the first ones, in file order). */
const MAX_LISTED_ERRORS = 100;

export async function validateBatch(rows: BatchRows, env: Env, b: Batch, meta: BatchMeta, maxLines: number, nowS: number): Promise<Batch> {
  const fail = (errors: Array<{ code: string; message: string; param: string | null; line: number | null }>) => {
    const failed = { ...advance(b, "invalid", nowS), errors: { object: "list" as const, data: errors.slice(0, MAX_LISTED_ERRORS) } };
    rows.saveBatch(failed);
    return failed;
  };
  const file = rows.file(b.input_file_id);
  const object = file ? await env.BATCH_FILES.get(file.r2Key) : null;
  if (!object) return fail([{ code: "file_not_found", message: `The input file ${b.input_file_id} was deleted before the batch was read.`, param: "input_file_id", line: null }]);
  const text = await object.text();
  const allowed = meta.allowed ? new Set(meta.allowed) : null;
  const mayUse = (model: string) => (allowed && !allowed.has(model) ? `the key may not use the model "${model}"; ask your admin to add it to the key's models, or use one of: ${[...allowed].join(", ")}.` : null);
  const read = readBatchLines(text, b.endpoint, mayUse, maxLines);
  if (read.tooMany) return fail([{ code: "too_many_requests", message: `The file has more than ${maxLines} requests (batch.maxLines): split it into several batches.`, param: "input_file_id", line: null }]);
  if (!read.valid.length) {
    const none = read.invalid.length ? [] : [{ code: "empty_file", message: "The input file has no request lines.", param: "input_file_id", line: null }];
    return fail([...read.invalid.map((p) => ({ code: p.code, message: p.message, param: p.param, line: p.line })), ...none]);
  }
  for (const v of read.valid) rows.addLine(b.id, v.line, v.customId, v.model, JSON.stringify(v.body), "pending", null);
  for (const p of read.invalid) rows.addLine(b.id, p.line, p.customId, "", "", "invalid", problemLine(randomId("batch_req_", 24), p));
  const started = { ...advance(b, "validated", nowS), model: read.valid[0]!.model };
  rows.saveBatch(started);
  return started;
}

/** Ends a batch whose running lines are over: `cancelled`, `expired` or `completed`, with its files. */
export async function finishBatch(rows: BatchRows, env: Env, b: Batch, expiring: boolean, retentionDays: number, nowS: number): Promise<Batch> {
  const cancelled = b.status === "cancelling";
  if (cancelled || expiring) {
    for (const u of rows.unrun(b.id)) rows.markUnrun(b.id, u.line, unrunLine(randomId("batch_req_", 24), u.custom_id, u.line, cancelled ? "batch_cancelled" : "batch_expired"));
  }
  const output = await writeFile(rows, env, `${b.id}_output.jsonl`, rows.results(b.id, false), retentionDays, nowS);
  const errors = await writeFile(rows, env, `${b.id}_error.jsonl`, rows.results(b.id, true), retentionDays, nowS);
  const ended = { ...advance(b, cancelled ? "drained" : "written", nowS, expiring), output_file_id: output, error_file_id: errors };
  rows.saveBatch(ended);
  return ended;
}

/** One result file in R2 and its record (purpose `batch_output`); null when it would be empty. */
async function writeFile(rows: BatchRows, env: Env, filename: string, lines: string[], retentionDays: number, nowS: number): Promise<string | null> {
  if (!lines.length) return null;
  const id = randomId("file-", 24);
  const bytes = new TextEncoder().encode(lines.join("\n") + "\n");
  const r2Key = `files/${id}`;
  await env.BATCH_FILES.put(r2Key, bytes, { httpMetadata: { contentType: "application/jsonl" } });
  const record: FileRecord = { id, object: "file", bytes: bytes.byteLength, created_at: nowS, expires_at: nowS + retentionDays * 86400, filename, purpose: "batch_output", status: "processed", status_details: null, r2Key };
  rows.putFile(record);
  return id;
}
