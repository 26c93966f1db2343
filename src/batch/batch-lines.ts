// A batch input file read line by line (docs/api.md, "Batches"): each line a request
// `{custom_id, method, url, body}` for the batch's endpoint, or a problem with its line number and a
// code a client can act on. A bad line goes to the error file and the batch goes on. Pure; linear in
// the file's size (one split, one JSON.parse per line).

/** The endpoints a batch may run, as OpenAI names them. */
export const BATCH_ENDPOINTS = ["/v1/chat/completions", "/v1/responses", "/v1/embeddings", "/v1/completions"] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

export function isBatchEndpoint(v: unknown): v is BatchEndpoint {
  return (BATCH_ENDPOINTS as readonly unknown[]).includes(v);
}

/** A line that will run: its 1-based line number in the file, its custom_id and the request body. */
export interface ValidLine {
  line: number;
  customId: string;
  model: string;
  body: Record<string, unknown>;
}

/** A line that will not run, with why (`code`) and where (`line`, and `param` when one field is at fault). */
export interface LineProblem {
  line: number;
  customId: string | null;
  code: string;
  message: string;
  param: string | null;
}

export interface ReadLines {
  valid: ValidLine[];
  invalid: LineProblem[];
}

/** The longest custom_id kept (OpenAI's clients use short ones; a row key must stay bounded). */
export const MAX_CUSTOM_ID = 512;

/**
 * Reads a batch file's lines for `endpoint`. `mayUse(model)`: null when the batch's key may use the
 * model, else the problem (its allow-list refuses it). Blank lines are skipped; line numbers are the
 * file's own. At most `maxLines` request lines are read: a file with more is refused whole
 * (`tooMany`), as is OpenAI's.
 */
export function readBatchLines(text: string, endpoint: BatchEndpoint, mayUse: (model: string) => string | null, maxLines: number): ReadLines & { tooMany: boolean } {
  const valid: ValidLine[] = [];
  const invalid: LineProblem[] = [];
  const seen = new Set<string>();
  const rows = text.split("\n");
  let count = 0;
  for (let i = 0; i < rows.length; i++) {
    const raw = rows[i]!.endsWith("\r") ? rows[i]!.slice(0, -1) : rows[i]!;
    if (raw.trim() === "") continue;
    if (++count > maxLines) return { valid, invalid, tooMany: true };
    const read = readLine(raw, i + 1, endpoint, mayUse, seen);
    if ("code" in read) invalid.push(read);
    else valid.push(read);
  }
  return { valid, invalid, tooMany: false };
}

function readLine(raw: string, line: number, endpoint: BatchEndpoint, mayUse: (model: string) => string | null, seen: Set<string>): ValidLine | LineProblem {
  const problem = (code: string, message: string, param: string | null = null, customId: string | null = null): LineProblem => ({ line, customId, code, message, param });
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return problem("invalid_json_line", `Line ${line} is not JSON: write one request object per line, {"custom_id": …, "method": "POST", "url": "${endpoint}", "body": {…}}.`);
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return problem("invalid_json_line", `Line ${line} is not a JSON object: write one request object per line.`);
  const o = parsed as Record<string, unknown>;
  const customId = typeof o.custom_id === "string" && o.custom_id !== "" ? o.custom_id : null;
  if (customId === null) return problem("missing_custom_id", `Line ${line} has no custom_id: give each line a non-empty string custom_id, unique in the file, to find its result by.`, "custom_id");
  if (customId.length > MAX_CUSTOM_ID) return problem("invalid_custom_id", `Line ${line}'s custom_id is longer than ${MAX_CUSTOM_ID} characters.`, "custom_id");
  const fail = (code: string, message: string, param: string | null = null) => problem(code, message, param, customId);
  if (seen.has(customId)) return fail("duplicate_custom_id", `Line ${line} repeats the custom_id "${customId}" of an earlier line: each line's custom_id must be unique in the file.`, "custom_id");
  seen.add(customId);
  if (o.method !== "POST") return fail("invalid_method", `Line ${line}'s method must be "POST".`, "method");
  if (o.url !== endpoint) return fail("mismatched_url", `Line ${line}'s url ${JSON.stringify(o.url)} is not the batch's endpoint ${endpoint}: every line of a batch goes to its endpoint; put other endpoints' requests in a batch of their own.`, "url");
  const body = o.body;
  if (!body || typeof body !== "object" || Array.isArray(body)) return fail("invalid_body", `Line ${line}'s body must be a JSON object: the request as ${endpoint} takes it.`, "body");
  const model = (body as Record<string, unknown>).model;
  if (typeof model !== "string" || model === "") return fail("missing_model", `Line ${line}'s body has no model: name the model to run it on.`, "body.model");
  const refused = mayUse(model);
  if (refused !== null) return fail("model_not_allowed", `Line ${line}: ${refused}`, "body.model");
  return { line, customId, model, body: body as Record<string, unknown> };
}
