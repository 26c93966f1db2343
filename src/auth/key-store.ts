// The Durable Object that holds the team's keys (hashes only): create, look up, list, revoke.
import { DurableObject } from "cloudflare:workers";
import type { BrowserPolicy } from "../config/config-schema.ts";
import type { KeyRecord } from "./key-record.ts";
import type { Scope } from "./scopes.ts";
import { maxTierOf, type ServiceTier } from "./service-tier.ts";

interface KeyRow extends Record<string, SqlStorageValue> {
  id: string;
  name: string;
  scopes: string;
  models: string | null;
  rpm: number | null;
  concurrency: number | null;
  tokens_per_day: number | null;
  default_max_tokens: number | null;
  browser: string | null;
  serves: string | null;
  priority: number | null;
  capture: number | null;
  max_service_tier: string | null;
  created_at: number;
  revoked_at: number | null;
}

/**
 * The team's keys (one instance, "keys"). Holds only SHA-256 hashes of the secrets: the Worker hashes
 * a presented key and asks for the record. Isolates cache answers for a few seconds (src/auth/key-directory.ts).
 */
export class KeyStore extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS keys (
      id TEXT PRIMARY KEY, name TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, scopes TEXT NOT NULL, models TEXT,
      rpm INTEGER, concurrency INTEGER, tokens_per_day INTEGER, created_at INTEGER NOT NULL, revoked_at INTEGER,
      browser TEXT, serves TEXT, priority INTEGER, default_max_tokens INTEGER, capture INTEGER)`);
    // Stores made before the browser data policy lack its columns: their keys follow browser.default;
    // stores made before the admission queue lack priority: their keys wait at level 0; stores made
    // before reservations lack default_max_tokens: their keys take the deployment's default; stores
    // made before per-key capture lack capture: their keys are not captured.
    const columns = ctx.storage.sql.exec("SELECT * FROM keys LIMIT 0").columnNames;
    for (const column of ["browser", "serves"]) if (!columns.includes(column)) ctx.storage.sql.exec(`ALTER TABLE keys ADD COLUMN ${column} TEXT`);
    if (!columns.includes("priority")) ctx.storage.sql.exec("ALTER TABLE keys ADD COLUMN priority INTEGER");
    if (!columns.includes("default_max_tokens")) ctx.storage.sql.exec("ALTER TABLE keys ADD COLUMN default_max_tokens INTEGER");
    if (!columns.includes("capture")) ctx.storage.sql.exec("ALTER TABLE keys ADD COLUMN capture INTEGER");
    // Stores made before service tiers lack max_service_tier: their keys are served up to `default`.
    if (!columns.includes("max_service_tier")) ctx.storage.sql.exec("ALTER TABLE keys ADD COLUMN max_service_tier TEXT");
  }

  create(record: KeyRecord, hash: string): KeyRecord {
    this.ctx.storage.sql.exec(
      "INSERT INTO keys (id, name, hash, scopes, models, rpm, concurrency, tokens_per_day, default_max_tokens, browser, serves, priority, capture, max_service_tier, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
      record.id,
      record.name,
      hash,
      JSON.stringify(record.scopes),
      record.models ? JSON.stringify(record.models) : null,
      record.limits.rpm ?? null,
      record.limits.concurrency ?? null,
      record.limits.tokensPerDay ?? null,
      record.limits.defaultMaxTokens ?? null,
      record.browser,
      record.serves ? JSON.stringify(record.serves) : null,
      record.priority || null,
      record.capture ? 1 : null,
      record.maxServiceTier === "default" ? null : record.maxServiceTier,
      record.createdAt,
    );
    return record;
  }

  /**
   * Changes a key's data policy (`browser`, `serves`), its queue `priority` or its `capture` (an absent
   * field stays as it is); returns the record and its hash so the caller can drop it from caches, or null if unknown.
   */
  update(id: string, change: { browser?: BrowserPolicy | null; serves?: string[] | null; priority?: number | null; capture?: boolean; maxServiceTier?: ServiceTier | null }): { record: KeyRecord; hash: string } | null {
    const sql = this.ctx.storage.sql;
    if ("priority" in change) sql.exec("UPDATE keys SET priority = ? WHERE id = ?", change.priority || null, id);
    if ("maxServiceTier" in change) sql.exec("UPDATE keys SET max_service_tier = ? WHERE id = ?", change.maxServiceTier === "default" ? null : (change.maxServiceTier ?? null), id);
    if ("capture" in change) sql.exec("UPDATE keys SET capture = ? WHERE id = ?", change.capture ? 1 : null, id);
    if ("browser" in change) sql.exec("UPDATE keys SET browser = ? WHERE id = ?", change.browser ?? null, id);
    if ("serves" in change) sql.exec("UPDATE keys SET serves = ? WHERE id = ?", change.serves ? JSON.stringify(change.serves) : null, id);
    const row = sql.exec<KeyRow & { hash: string }>("SELECT * FROM keys WHERE id = ?", id).toArray()[0];
    return row ? { record: toRecord(row), hash: row.hash } : null;
  }

  /** The record for a key's hash (revoked ones too, so the caller can say so), and how many keys are active. */
  lookup(hash: string): { record: KeyRecord | null; activeKeys: number } {
    const row = this.ctx.storage.sql.exec<KeyRow>("SELECT * FROM keys WHERE hash = ?", hash).toArray()[0];
    return { record: row ? toRecord(row) : null, activeKeys: this.activeKeys() };
  }

  activeKeys(): number {
    return Number(this.ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM keys WHERE revoked_at IS NULL").one().n);
  }

  list(): KeyRecord[] {
    return this.ctx.storage.sql.exec<KeyRow>("SELECT * FROM keys ORDER BY created_at, id").toArray().map(toRecord);
  }

  get(id: string): KeyRecord | null {
    const row = this.ctx.storage.sql.exec<KeyRow>("SELECT * FROM keys WHERE id = ?", id).toArray()[0];
    return row ? toRecord(row) : null;
  }

  /** Marks a key revoked; returns its hash so the caller can drop it from caches, or null if unknown. */
  revoke(id: string, now: number): { record: KeyRecord; hash: string } | null {
    const row = this.ctx.storage.sql.exec<KeyRow & { hash: string }>("SELECT * FROM keys WHERE id = ?", id).toArray()[0];
    if (!row) return null;
    if (row.revoked_at === null) this.ctx.storage.sql.exec("UPDATE keys SET revoked_at = ? WHERE id = ?", now, id);
    return { record: { ...toRecord(row), revokedAt: row.revoked_at ?? now }, hash: row.hash };
  }
}

function toRecord(row: KeyRow): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    scopes: JSON.parse(row.scopes) as Scope[],
    models: row.models ? (JSON.parse(row.models) as string[]) : null,
    limits: {
      ...(row.rpm !== null ? { rpm: row.rpm } : {}),
      ...(row.concurrency !== null ? { concurrency: row.concurrency } : {}),
      ...(row.tokens_per_day !== null ? { tokensPerDay: row.tokens_per_day } : {}),
      ...(row.default_max_tokens !== null && row.default_max_tokens !== undefined ? { defaultMaxTokens: row.default_max_tokens } : {}),
    },
    browser: row.browser === "allow" || row.browser === "deny" ? row.browser : null,
    serves: row.serves ? (JSON.parse(row.serves) as string[]) : null,
    priority: row.priority ?? 0,
    capture: row.capture === 1,
    maxServiceTier: maxTierOf(row.max_service_tier),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
