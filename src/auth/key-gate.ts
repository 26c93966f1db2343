import { DurableObject } from "cloudflare:workers";
import { randomUuid } from "../stream/ids.ts";
import type { UsageReport, UsageRow } from "./key-record.ts";
import { dayOf, decideAdmission, LEASE_TTL_MS, WINDOW_MS, type Admission, type KeyLimits } from "./limit-math.ts";

export type GateAdmission = (Admission & { leaseId?: string }) | { ok: false; code: "invalid_api_key"; retryAfter: 0; message: string };

/**
 * One key's exact counters (one instance per key id): admissions in the last minute, stream slots as
 * leases with a TTL, and usage per day, model and backend. A Durable Object runs one call at a time,
 * so a burst of concurrent admissions is counted exactly.
 */
export class KeyGate extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS hits (ts INTEGER NOT NULL)");
    sql.exec("CREATE TABLE IF NOT EXISTS leases (id TEXT PRIMARY KEY, expires INTEGER NOT NULL)");
    sql.exec(`CREATE TABLE IF NOT EXISTS usage (day TEXT NOT NULL, model TEXT NOT NULL, backend TEXT NOT NULL,
      requests INTEGER NOT NULL, prompt INTEGER NOT NULL, completion INTEGER NOT NULL, errors INTEGER NOT NULL,
      PRIMARY KEY (day, model, backend))`);
    sql.exec("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)");
  }

  /** Admits one request against the key's limits (and takes a stream slot if `lease`), or says why not. */
  admit(limits: KeyLimits, lease: boolean): GateAdmission {
    const sql = this.ctx.storage.sql;
    if (sql.exec("SELECT 1 FROM meta WHERE k = 'revoked'").toArray().length) {
      return { ok: false, code: "invalid_api_key", retryAfter: 0, message: "This API key was revoked." };
    }
    const now = Date.now();
    sql.exec("DELETE FROM hits WHERE ts <= ?", now - WINDOW_MS);
    sql.exec("DELETE FROM leases WHERE expires <= ?", now);
    const hits = limits.rpm !== undefined ? sql.exec<{ ts: number }>("SELECT ts FROM hits ORDER BY ts").toArray().map((r) => r.ts) : [];
    const leases = Number(sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM leases").one().n);
    const tokensToday =
      limits.tokensPerDay !== undefined
        ? Number(sql.exec<{ n: number }>("SELECT COALESCE(SUM(prompt + completion), 0) AS n FROM usage WHERE day = ?", dayOf(now)).one().n)
        : 0;
    const decision = decideAdmission({ hits, leases, tokensToday }, limits, now, lease);
    if (!decision.ok) return decision;
    if (limits.rpm !== undefined) sql.exec("INSERT INTO hits (ts) VALUES (?)", now);
    if (!lease) return decision;
    const leaseId = randomUuid();
    sql.exec("INSERT INTO leases (id, expires) VALUES (?, ?)", leaseId, now + LEASE_TTL_MS);
    return { ok: true, leaseId };
  }

  /** Keeps a running request's slot alive. */
  renew(leaseId: string): void {
    this.ctx.storage.sql.exec("UPDATE leases SET expires = ? WHERE id = ?", Date.now() + LEASE_TTL_MS, leaseId);
  }

  /** Records what a request used and frees its slot. */
  settle(report: UsageReport): void {
    const sql = this.ctx.storage.sql;
    if (report.leaseId) sql.exec("DELETE FROM leases WHERE id = ?", report.leaseId);
    sql.exec(
      `INSERT INTO usage (day, model, backend, requests, prompt, completion, errors) VALUES (?, ?, ?, 1, ?, ?, ?)
       ON CONFLICT (day, model, backend) DO UPDATE SET requests = requests + 1, prompt = prompt + excluded.prompt,
       completion = completion + excluded.completion, errors = errors + excluded.errors`,
      dayOf(Date.now()),
      report.model,
      report.backend,
      Math.max(0, Math.round(report.promptTokens)),
      Math.max(0, Math.round(report.completionTokens)),
      report.error ? 1 : 0,
    );
  }

  usage(sinceDay?: string): UsageRow[] {
    return this.ctx.storage.sql
      .exec<{ day: string; model: string; backend: string; requests: number; prompt: number; completion: number; errors: number }>(
        "SELECT * FROM usage WHERE day >= ? ORDER BY day, model, backend",
        sinceDay ?? "",
      )
      .toArray()
      .map((r) => ({ day: r.day, model: r.model, backend: r.backend, requests: r.requests, promptTokens: r.prompt, completionTokens: r.completion, errors: r.errors }));
  }

  /** Live slots (for tests and the admin view). */
  activeLeases(): number {
    return Number(this.ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM leases WHERE expires > ?", Date.now()).one().n);
  }

  revoke(): void {
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO meta (k, v) VALUES ('revoked', '1')");
    this.ctx.storage.sql.exec("DELETE FROM leases");
  }
}
