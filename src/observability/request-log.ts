// The RequestLog Durable Object: the request log's rows (and captures) in SQLite, so they survive
// restarts and deploys, kept within a count and an age; written in batches by the isolates. Requests
// refused before a key was known have a small pool of their own, so that no flood of them evicts a
// keyed request's row.
import { DurableObject } from "cloudflare:workers";
import { unauthenticatedMax, type Retention } from "./log-retention.ts";

export type { Retention };

export interface LogQuery {
  limit: number;
  /** A key's id or name. */
  key?: string;
  /** Only requests whose client got an error (a 4xx/5xx status, or a stream's error frame). */
  errorsOnly?: boolean;
  model?: string;
  /** Requests whose client sent this id (`x-request-id` or `x-client-request-id`). */
  clientRequestId?: string;
  /** The unauthenticated pool (requests refused before a key was known) instead of the log's own rows. */
  unauthenticated?: boolean;
}

/** How often rows are pruned by age at most. */
const AGE_PRUNE_MS = 60_000;
/** Rows per INSERT: 9 values each, within the 100 bound parameters a statement may have. */
const ROWS_PER_INSERT = 11;
const ROW_VALUES = "(?, ?, ?, ?, ?, ?, ?, ?, ?)";
const inserts = new Map<number, string>();
/** The INSERT of `n` rows (made once per n). */
function insertOf(n: number): string {
  let q = inserts.get(n);
  if (!q) inserts.set(n, (q = `INSERT INTO requests (seq, id, at, key_id, key_name, model, failed, record, client_id) VALUES ${Array(n).fill(ROW_VALUES).join(", ")}`));
  return q;
}

/**
 * One request as an isolate sends it: id, arrival (ms), key id, key name, model, failed (0/1), the
 * record's JSON, the id its client sent, and 1 when it was refused before a key was known (its pool).
 */
export type LogRow = [id: string, at: number, keyId: string | null, keyName: string | null, model: string | null, failed: 0 | 1, record: string, clientId?: string | null, unauthenticated?: 0 | 1];

interface Row extends Record<string, SqlStorageValue> {
  seq: number;
  record: string;
}

/**
 * One instance ("requests", or REQUEST_LOG_NAME) for the deployment: a request's row is written once,
 * when it ended, in a batch with the isolate's other requests of the last second. Every write prunes
 * what retention no longer allows, so the table never holds more than a batch above `maxRecords`.
 * The log's own rows are numbered 1, 2, 3, … in the order written; the unauthenticated pool's
 * -1, -2, -3, …: each pool's count bound is a range of the primary key, and one never prunes the other.
 */
export class RequestLog extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // No index but the row id: a row is written once per request and read only by an admin, so
    // writes stay cheap and a read scans at most maxRecords rows.
    ctx.storage.sql.exec(`
      CREATE TABLE IF NOT EXISTS requests (
        seq INTEGER PRIMARY KEY, id TEXT NOT NULL, at INTEGER NOT NULL, key_id TEXT, key_name TEXT,
        model TEXT, failed INTEGER NOT NULL, record TEXT NOT NULL, client_id TEXT);
      CREATE TABLE IF NOT EXISTS captures (seq INTEGER PRIMARY KEY, capture TEXT NOT NULL);`);
    // A table made before client_id existed gets it (its rows' client_id is null).
    const columns = ctx.storage.sql.exec<{ name: string }>("PRAGMA table_info(requests)").toArray();
    if (!columns.some((c) => c.name === "client_id")) ctx.storage.sql.exec("ALTER TABLE requests ADD COLUMN client_id TEXT");
  }

  /** The next row's seq in the log, and in the unauthenticated pool (negative), once read (only this object writes the table). */
  private nextSeq: number | undefined;
  private nextPoolSeq: number | undefined;
  /** When rows were last pruned by age (reads filter by age anyway: this only frees the space). */
  private agePrunedAt = 0;

  /**
   * Keeps a batch of finished requests (`rows`, in the order they ended), then prunes to
   * `retention`. Rows go in statements of ROWS_PER_INSERT with their columns bound (SQLite parses
   * no JSON; a statement per row cost a call each); seq is the row's place after the newest.
   */
  add(rows: LogRow[], captures: Array<{ index: number; capture: string }>, retention: Retention): void {
    const sql = this.ctx.storage.sql;
    try {
      this.ctx.storage.transactionSync(() => {
        let next = (this.nextSeq ??= sql.exec<{ seq: number }>("SELECT COALESCE(MAX(seq), 0) + 1 AS seq FROM requests WHERE seq > 0").one().seq);
        let nextPool = (this.nextPoolSeq ??= sql.exec<{ seq: number }>("SELECT COALESCE(MIN(seq), 0) - 1 AS seq FROM requests WHERE seq < 0").one().seq);
        const seqs = rows.map((row) => (row[8] === 1 ? nextPool-- : next++));
        for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
          const chunk = rows.slice(start, start + ROWS_PER_INSERT);
          const values: SqlStorageValue[] = [];
          chunk.forEach((row, i) => values.push(seqs[start + i]!, row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7] ?? null));
          sql.exec(insertOf(chunk.length), ...values);
        }
        for (const c of captures) sql.exec("INSERT INTO captures (seq, capture) VALUES (?, ?)", seqs[c.index]!, c.capture);
        this.nextSeq = next;
        this.nextPoolSeq = nextPool;
        this.prune(retention, next - 1, nextPool + 1, captures.length > 0);
      });
    } catch (e) {
      // Rolled back: the next batch reads where the table ends.
      this.nextSeq = this.nextPoolSeq = undefined;
      throw e;
    }
  }

  /** The newest requests first (by arrival), filtered; none older than `maxAgeMs`: each record's JSON, as stored. */
  list(q: LogQuery, maxAgeMs: number): string[] {
    const where = ["at >= ?", q.unauthenticated ? "seq < 0" : "seq > 0"];
    const args: SqlStorageValue[] = [Date.now() - maxAgeMs];
    if (q.clientRequestId !== undefined) {
      where.push("client_id = ?");
      args.push(q.clientRequestId);
    }
    if (q.key !== undefined) {
      where.push("(key_id = ? OR key_name = ?)");
      args.push(q.key, q.key);
    }
    if (q.errorsOnly) where.push("failed = 1");
    if (q.model !== undefined) {
      where.push("model = ?");
      args.push(q.model);
    }
    const rows = this.ctx.storage.sql.exec<Row>(`SELECT seq, record FROM requests WHERE ${where.join(" AND ")} ORDER BY at DESC, abs(seq) DESC LIMIT ?`, ...args, q.limit).toArray();
    return rows.map((r) => r.record);
  }

  /**
   * One request by the id Switchyard gave it: its record's and its capture's JSON, or null. Ids are
   * Switchyard's own, so one names one request; rows written before that (when a client's id was
   * taken) may share one: the log's own rows come before the unauthenticated pool's, a keyed row
   * before one without a key, then the newest.
   */
  get(id: string, maxAgeMs: number): { record: string; capture: string | null } | null {
    const row = this.ctx.storage.sql
      .exec<Row & { capture: string | null }>(
        "SELECT r.seq, r.record, c.capture FROM requests r LEFT JOIN captures c ON c.seq = r.seq WHERE r.id = ? AND r.at >= ? ORDER BY r.seq < 0, r.key_id IS NULL, r.at DESC, abs(r.seq) DESC LIMIT 1",
        id,
        Date.now() - maxAgeMs,
      )
      .toArray()[0];
    return row ? { record: row.record, capture: row.capture } : null;
  }

  /** Rows (the log's own, and the unauthenticated pool's) and captures held (for the tests of retention and the status page). */
  counts(): { requests: number; unauthenticated: number; captures: number } {
    const sql = this.ctx.storage.sql;
    return {
      requests: sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM requests WHERE seq > 0").one().n,
      unauthenticated: sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM requests WHERE seq < 0").one().n,
      captures: sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM captures").one().n,
    };
  }

  /**
   * Drops what retention no longer allows, `last` being the log's newest row's seq and `lastPool` the
   * unauthenticated pool's (negative). Each pool is numbered densely in the order written, so its
   * count bound is a range of the primary key (no scan of the rows kept). The age bound looks at the
   * oldest rows only, at most once a minute (every read filters by age: this only frees their
   * space). Captures are looked at only when some were added or their rows went.
   */
  private prune(retention: Retention, last: number, lastPool: number, capturesAdded: boolean): void {
    const sql = this.ctx.storage.sql;
    let dropped = sql.exec("DELETE FROM requests WHERE seq > 0 AND seq <= ?", last - retention.maxRecords).rowsWritten;
    dropped += sql.exec("DELETE FROM requests WHERE seq < 0 AND seq >= ?", lastPool + unauthenticatedMax(retention.maxRecords)).rowsWritten;
    const now = Date.now();
    if (now - this.agePrunedAt >= AGE_PRUNE_MS) {
      this.agePrunedAt = now;
      // Rows end roughly in the order they arrived: the oldest by age are among each pool's first rows.
      dropped += sql.exec("DELETE FROM requests WHERE seq IN (SELECT seq FROM requests WHERE seq > 0 ORDER BY seq LIMIT 256) AND at < ?", now - retention.maxAgeMs).rowsWritten;
      dropped += sql.exec("DELETE FROM requests WHERE seq IN (SELECT seq FROM requests WHERE seq < 0 ORDER BY seq DESC LIMIT 256) AND at < ?", now - retention.maxAgeMs).rowsWritten;
    }
    if (dropped > 0) {
      const oldest = sql.exec<{ seq: number | null }>("SELECT MIN(seq) AS seq FROM requests WHERE seq > 0").one().seq ?? last + 1;
      sql.exec("DELETE FROM captures WHERE seq > 0 AND seq < ?", oldest);
      const oldestPool = sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM requests WHERE seq < 0").one().seq ?? lastPool - 1;
      sql.exec("DELETE FROM captures WHERE seq < 0 AND seq > ?", oldestPool);
    }
    // Captures are kept on the newest captureMaxRecords requests that have one (few: capture is opt-in).
    if (capturesAdded && sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM captures").one().n > retention.captureMaxRecords) {
      sql.exec("DELETE FROM captures WHERE seq <= (SELECT seq FROM captures ORDER BY seq DESC LIMIT 1 OFFSET ?)", retention.captureMaxRecords);
    }
  }
}
