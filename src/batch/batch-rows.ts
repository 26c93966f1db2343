// The batch Durable Object's SQLite tables: files (their records; the bytes are in R2), batches (the
// Batch object as JSON, with what the runner needs: the key, its allow-list, whether it is expiring)
// and each batch's lines (the request, its state, its result line).
import { answeredLine, type Batch, type BatchStatus, type ResultLine } from "./batch-object.ts";
import type { BatchEndpoint } from "./batch-lines.ts";

/** A file's record as stored: OpenAI's File object, and where its bytes are in R2. */
export interface FileRecord {
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  expires_at: number;
  filename: string;
  purpose: "batch" | "batch_output";
  status: "processed";
  status_details: null;
  r2Key: string;
}

export interface BatchMeta {
  keyId: string | null;
  allowed: string[] | null;
  expiring: boolean;
  endpoint: BatchEndpoint;
}

export interface LineRow extends Record<string, SqlStorageValue> {
  batch_id: string;
  line: number;
  custom_id: string;
  model: string;
  body: string;
}

/** pending → running → done | failed; invalid at validation; unrun when the batch ends first. */
type LineState = "pending" | "running" | "done" | "failed" | "invalid" | "unrun";

const ACTIVE: BatchStatus[] = ["validating", "in_progress", "finalizing", "cancelling"];

export class BatchRows {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS files (id TEXT PRIMARY KEY, purpose TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, json TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS batches (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, status TEXT NOT NULL, json TEXT NOT NULL,
      key_id TEXT, allowed TEXT, expiring INTEGER NOT NULL DEFAULT 0)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS lines (batch_id TEXT NOT NULL, line INTEGER NOT NULL, custom_id TEXT, model TEXT NOT NULL DEFAULT '',
      body TEXT NOT NULL DEFAULT '', state TEXT NOT NULL, result TEXT, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (batch_id, line))`);
    sql.exec(`CREATE INDEX IF NOT EXISTS lines_state ON lines (state, batch_id, line)`);
  }

  // ---- files ----

  putFile(f: FileRecord): void {
    this.sql.exec("INSERT OR REPLACE INTO files (id, purpose, created_at, expires_at, json) VALUES (?, ?, ?, ?, ?)", f.id, f.purpose, f.created_at, f.expires_at, JSON.stringify(f));
  }

  file(id: string): FileRecord | null {
    const row = this.sql.exec<{ json: string }>("SELECT json FROM files WHERE id = ?", id).toArray()[0];
    return row ? (JSON.parse(row.json) as FileRecord) : null;
  }

  fileCount(): number {
    return Number(this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM files").one().n);
  }

  files(opts: { after?: string; limit: number; purpose?: string; order: "asc" | "desc" }): { data: FileRecord[]; has_more: boolean } {
    const cmp = opts.order === "asc" ? ">" : "<";
    const cursor = opts.after ? this.sql.exec<{ r: number }>("SELECT rowid AS r FROM files WHERE id = ?", opts.after).toArray()[0]?.r : undefined;
    const where = [cursor !== undefined ? `rowid ${cmp} ${Number(cursor)}` : "1", opts.purpose ? "purpose = ?" : "1"].join(" AND ");
    const args = opts.purpose ? [opts.purpose] : [];
    const rows = this.sql.exec<{ json: string }>(`SELECT json FROM files WHERE ${where} ORDER BY rowid ${opts.order === "asc" ? "ASC" : "DESC"} LIMIT ?`, ...args, opts.limit + 1).toArray();
    return { data: rows.slice(0, opts.limit).map((r) => JSON.parse(r.json) as FileRecord), has_more: rows.length > opts.limit };
  }

  deleteFile(id: string): void {
    this.sql.exec("DELETE FROM files WHERE id = ?", id);
  }

  // ---- batches ----

  putBatch(b: Batch, meta: { keyId: string | null; allowed: string[] | null; expiring: boolean }): void {
    this.sql.exec("INSERT INTO batches (id, created_at, status, json, key_id, allowed, expiring) VALUES (?, ?, ?, ?, ?, ?, ?)", b.id, b.created_at, b.status, JSON.stringify(b), meta.keyId, meta.allowed ? JSON.stringify(meta.allowed) : null, meta.expiring ? 1 : 0);
  }

  saveBatch(b: Batch, change: { expiring?: boolean } = {}): void {
    this.sql.exec("UPDATE batches SET status = ?, json = ? WHERE id = ?", b.status, JSON.stringify(b), b.id);
    if (change.expiring !== undefined) this.sql.exec("UPDATE batches SET expiring = ? WHERE id = ?", change.expiring ? 1 : 0, b.id);
  }

  /** The batch with its request_counts and usage as its lines stand now. */
  batch(id: string): Batch | null {
    const row = this.sql.exec<{ json: string }>("SELECT json FROM batches WHERE id = ?", id).toArray()[0];
    return row ? this.withCounts(JSON.parse(row.json) as Batch) : null;
  }

  batchMeta(id: string): BatchMeta | null {
    const row = this.sql.exec<{ key_id: string | null; allowed: string | null; expiring: number; json: string }>("SELECT key_id, allowed, expiring, json FROM batches WHERE id = ?", id).toArray()[0];
    if (!row) return null;
    return { keyId: row.key_id, allowed: row.allowed ? (JSON.parse(row.allowed) as string[]) : null, expiring: row.expiring === 1, endpoint: (JSON.parse(row.json) as Batch).endpoint };
  }

  batches(opts: { after?: string; limit: number }): { data: Batch[]; has_more: boolean } {
    const cursor = opts.after ? this.sql.exec<{ r: number }>("SELECT rowid AS r FROM batches WHERE id = ?", opts.after).toArray()[0]?.r : undefined;
    const rows = this.sql.exec<{ id: string }>(`SELECT id FROM batches ${cursor !== undefined ? `WHERE rowid < ${Number(cursor)}` : ""} ORDER BY rowid DESC LIMIT ?`, opts.limit + 1).toArray();
    return { data: rows.slice(0, opts.limit).map((r) => this.batch(r.id)!), has_more: rows.length > opts.limit };
  }

  activeBatches(): Batch[] {
    const rows = this.sql.exec<{ id: string }>(`SELECT id FROM batches WHERE status IN (${ACTIVE.map(() => "?").join(", ")}) ORDER BY created_at, rowid`, ...ACTIVE).toArray();
    return rows.map((r) => this.batch(r.id)!);
  }

  private withCounts(b: Batch): Batch {
    const c = this.sql
      .exec<{ total: number; done: number; failed: number; input: number; output: number }>(
        "SELECT COUNT(*) AS total, SUM(state = 'done') AS done, SUM(state IN ('failed', 'invalid', 'unrun')) AS failed, SUM(input_tokens) AS input, SUM(output_tokens) AS output FROM lines WHERE batch_id = ?",
        b.id,
      )
      .one();
    const input = Number(c.input ?? 0);
    const output = Number(c.output ?? 0);
    return {
      ...b,
      request_counts: { total: Number(c.total ?? 0), completed: Number(c.done ?? 0), failed: Number(c.failed ?? 0) },
      usage: { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + output },
    };
  }

  // ---- lines ----

  addLine(batchId: string, line: number, customId: string | null, model: string, body: string, state: LineState, result: ResultLine | null): void {
    this.sql.exec("INSERT OR REPLACE INTO lines (batch_id, line, custom_id, model, body, state, result) VALUES (?, ?, ?, ?, ?, ?, ?)", batchId, line, customId, model, body, state, result ? JSON.stringify(result) : null);
  }

  /** The next lines to run, across this owner's in-progress batches, the oldest batch first. */
  pendingLines(limit: number): LineRow[] {
    return this.sql
      .exec<LineRow>(
        "SELECT l.batch_id, l.line, l.custom_id, l.model, l.body FROM lines l JOIN batches b ON b.id = l.batch_id WHERE l.state = 'pending' AND b.status = 'in_progress' ORDER BY b.created_at, b.rowid, l.line LIMIT ?",
        limit,
      )
      .toArray();
  }

  hasPending(batchId: string): boolean {
    return this.sql.exec("SELECT 1 FROM lines WHERE batch_id = ? AND state IN ('pending', 'running') LIMIT 1", batchId).toArray().length > 0;
  }

  markRunning(batchId: string, line: number): void {
    this.sql.exec("UPDATE lines SET state = 'running' WHERE batch_id = ? AND line = ?", batchId, line);
  }

  markPending(batchId: string, line: number): void {
    this.sql.exec("UPDATE lines SET state = 'pending' WHERE batch_id = ? AND line = ?", batchId, line);
  }

  requeueRunning(): void {
    this.sql.exec("UPDATE lines SET state = 'pending' WHERE state = 'running'");
  }

  markAnswered(batchId: string, line: number, id: string, o: { status: number; requestId: string; body: unknown; usage: { input: number; output: number } }): void {
    const row = this.sql.exec<{ custom_id: string }>("SELECT custom_id FROM lines WHERE batch_id = ? AND line = ?", batchId, line).toArray()[0];
    if (!row) return;
    const result = answeredLine(id, row.custom_id, o.status, o.requestId, o.body);
    const ok = o.status >= 200 && o.status < 300;
    this.sql.exec("UPDATE lines SET state = ?, result = ?, input_tokens = ?, output_tokens = ?, body = '' WHERE batch_id = ? AND line = ?", ok ? "done" : "failed", JSON.stringify(result), o.usage.input, o.usage.output, batchId, line);
  }

  /** The lines not run when the batch ended (pending), each with its custom_id and line number. */
  unrun(batchId: string): Array<{ line: number; custom_id: string }> {
    return this.sql.exec<{ line: number; custom_id: string }>("SELECT line, custom_id FROM lines WHERE batch_id = ? AND state = 'pending' ORDER BY line", batchId).toArray();
  }

  markUnrun(batchId: string, line: number, result: ResultLine): void {
    this.sql.exec("UPDATE lines SET state = 'unrun', result = ?, body = '' WHERE batch_id = ? AND line = ?", JSON.stringify(result), batchId, line);
  }

  /** The result lines of one kind, in file order: the output file's (`done`) or the error file's. */
  results(batchId: string, errors: boolean): string[] {
    const states = errors ? "('failed', 'invalid', 'unrun')" : "('done')";
    return this.sql.exec<{ result: string }>(`SELECT result FROM lines WHERE batch_id = ? AND state IN ${states} ORDER BY line`, batchId).toArray().map((r) => r.result);
  }

  /** Drops files past their expiry and finished batches older than the retention; the R2 keys to delete. */
  pruneExpired(nowS: number, retentionS: number, terminal: ReadonlySet<BatchStatus>): string[] {
    const gone = this.sql.exec<{ json: string }>("SELECT json FROM files WHERE expires_at <= ?", nowS).toArray().map((r) => (JSON.parse(r.json) as FileRecord).r2Key);
    this.sql.exec("DELETE FROM files WHERE expires_at <= ?", nowS);
    const old = this.sql.exec<{ id: string; status: string }>("SELECT id, status FROM batches WHERE created_at <= ?", nowS - retentionS).toArray();
    for (const b of old) {
      if (!terminal.has(b.status as BatchStatus)) continue;
      this.sql.exec("DELETE FROM lines WHERE batch_id = ?", b.id);
      this.sql.exec("DELETE FROM batches WHERE id = ?", b.id);
    }
    return gone;
  }
}
