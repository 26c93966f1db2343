// The Durable Object that keeps stored Responses (for previous_response_id, item_reference and
// /v1/responses/{id}) for 30 days, one instance per owner, and the deployment's sealing key.
import { DurableObject } from "cloudflare:workers";

type Json = Record<string, unknown>;

/** What one stored response keeps: its own input items (ids assigned) and the response object. */
export interface StoredResponse {
  id: string;
  createdAt: number;
  previousResponseId: string | null;
  inputItems: Json[];
  response: Json;
}

export interface InputItemsPage {
  data: Json[];
  has_more: boolean;
}

/** How long a stored response is kept (OpenAI's default for stored responses), and how many per owner. */
export const RETENTION_DAYS = 30;
const RETENTION_MS = RETENTION_DAYS * 24 * 3600 * 1000;
export const MAX_RESPONSES_PER_OWNER = 10_000;
/** One item's JSON at most (a SQLite row here holds up to 2 MB); a response with a larger item is not stored. */
export const MAX_ITEM_BYTES = 1024 * 1024;
/** The longest previous_response_id chain that is followed. */
const MAX_CHAIN = 10_000;

interface ResponseRow extends Record<string, SqlStorageValue> {
  id: string;
  created_at: number;
  previous_response_id: string | null;
  response: string;
}

/**
 * Stored Responses API objects, one instance per owner (a key id, a hashed credential, or
 * "anonymous": src/api/responses/response-owner.ts), so another owner's ids simply do not exist
 * here; and in the instance "seal-key" the deployment's sealing key. Items are rows of their own so
 * that `item_reference`, `input_items` and a chain's conversation are single indexed reads.
 */
export class ResponseStore extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`
      CREATE TABLE IF NOT EXISTS seal_key (id INTEGER PRIMARY KEY CHECK (id = 1), key BLOB NOT NULL);
      CREATE TABLE IF NOT EXISTS responses (
        id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, previous_response_id TEXT, response TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS responses_by_age ON responses (created_at);
      CREATE TABLE IF NOT EXISTS items (
        response_id TEXT NOT NULL, kind TEXT NOT NULL, position INTEGER NOT NULL, item_id TEXT NOT NULL, item TEXT NOT NULL,
        PRIMARY KEY (response_id, kind, position));
      CREATE INDEX IF NOT EXISTS items_by_id ON items (item_id);`);
  }

  /** The sealing key, made on first use. */
  sealKey(): ArrayBuffer {
    const row = this.ctx.storage.sql.exec<{ key: ArrayBuffer }>("SELECT key FROM seal_key WHERE id = 1").toArray()[0];
    if (row) return row.key;
    const key = crypto.getRandomValues(new Uint8Array(32));
    this.ctx.storage.sql.exec("INSERT INTO seal_key (id, key) VALUES (1, ?)", key.buffer);
    return key.buffer;
  }

  /** Keeps a finished response; `null` when stored, else why not. */
  save(r: StoredResponse): string | null {
    const inputs = r.inputItems.map((item) => JSON.stringify(item));
    const outputs = (Array.isArray(r.response.output) ? (r.response.output as Json[]) : []).map((item) => JSON.stringify(item));
    if ([...inputs, ...outputs].some((s) => s.length > MAX_ITEM_BYTES)) return `an item is over ${MAX_ITEM_BYTES} bytes of JSON`;
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      this.purge();
      sql.exec("INSERT OR REPLACE INTO responses (id, created_at, previous_response_id, response) VALUES (?, ?, ?, ?)", r.id, r.createdAt, r.previousResponseId, JSON.stringify(r.response));
      sql.exec("DELETE FROM items WHERE response_id = ?", r.id);
      const put = (kind: string, items: Json[], json: string[]) =>
        items.forEach((item, i) => sql.exec("INSERT INTO items (response_id, kind, position, item_id, item) VALUES (?, ?, ?, ?, ?)", r.id, kind, i, String(item.id ?? ""), json[i]!));
      put("input", r.inputItems, inputs);
      put("output", (r.response.output as Json[] | undefined) ?? [], outputs);
    });
    return null;
  }

  get(id: string): Json | null {
    const row = this.row(id);
    return row ? (JSON.parse(row.response) as Json) : null;
  }

  /**
   * Every item of the conversation that ends with `id`, oldest first: each response's input items,
   * then its output items, back along previous_response_id. Null if `id` is not stored here.
   */
  conversation(id: string): Json[] | null {
    const chain: string[] = [];
    let at: string | null = id;
    while (at !== null && chain.length < MAX_CHAIN) {
      const row = this.row(at);
      if (!row) {
        if (chain.length === 0) return null;
        break; // an expired or deleted ancestor: the conversation starts after it
      }
      chain.push(row.id);
      at = row.previous_response_id;
    }
    const items: Json[] = [];
    for (const responseId of chain.reverse()) {
      for (const kind of ["input", "output"]) {
        for (const r of this.ctx.storage.sql.exec<{ item: string }>("SELECT item FROM items WHERE response_id = ? AND kind = ? ORDER BY position", responseId, kind)) {
          items.push(JSON.parse(r.item) as Json);
        }
      }
    }
    return items;
  }

  /** The input items of one response, OpenAI's list paging (`order`, `after`, `limit`). Null if not stored. */
  inputItems(id: string, opts: { order: "asc" | "desc"; after?: string; limit: number }): InputItemsPage | null {
    if (!this.row(id)) return null;
    const rows = this.ctx.storage.sql
      .exec<{ item: string; item_id: string }>(`SELECT item, item_id FROM items WHERE response_id = ? AND kind = 'input' ORDER BY position ${opts.order === "asc" ? "ASC" : "DESC"}`, id)
      .toArray();
    const start = opts.after ? rows.findIndex((r) => r.item_id === opts.after) + 1 : 0;
    const page = rows.slice(start, start + opts.limit);
    return { data: page.map((r) => JSON.parse(r.item) as Json), has_more: start + opts.limit < rows.length };
  }

  /** An item by its id, from any response of this owner (for `item_reference`). */
  item(itemId: string): Json | null {
    const row = this.ctx.storage.sql
      .exec<{ item: string }>(
        "SELECT items.item FROM items JOIN responses ON responses.id = items.response_id WHERE items.item_id = ? AND responses.created_at > ? ORDER BY responses.created_at DESC LIMIT 1",
        itemId,
        Date.now() - RETENTION_MS,
      )
      .toArray()[0];
    return row ? (JSON.parse(row.item) as Json) : null;
  }

  delete(id: string): boolean {
    if (!this.row(id)) return false;
    this.ctx.storage.transactionSync(() => {
      this.ctx.storage.sql.exec("DELETE FROM items WHERE response_id = ?", id);
      this.ctx.storage.sql.exec("DELETE FROM responses WHERE id = ?", id);
    });
    return true;
  }

  /** A live (unexpired) response row. */
  private row(id: string): ResponseRow | undefined {
    return this.ctx.storage.sql.exec<ResponseRow>("SELECT * FROM responses WHERE id = ? AND created_at > ?", id, Date.now() - RETENTION_MS).toArray()[0];
  }

  /** Drops expired responses, and the oldest beyond the per-owner count, with their items. */
  private purge(): void {
    const sql = this.ctx.storage.sql;
    const cutoff = Date.now() - RETENTION_MS;
    const excess = Number(sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM responses").one().n) - (MAX_RESPONSES_PER_OWNER - 1);
    const doomed = sql
      .exec<{ id: string }>("SELECT id FROM responses WHERE created_at <= ? UNION SELECT id FROM (SELECT id FROM responses ORDER BY created_at LIMIT ?)", cutoff, Math.max(0, excess))
      .toArray();
    for (const { id } of doomed) {
      sql.exec("DELETE FROM items WHERE response_id = ?", id);
      sql.exec("DELETE FROM responses WHERE id = ?", id);
    }
  }
}
