// The Durable Object that enforces one key's limits exactly (requests a minute, concurrency, tokens
// a day) and keeps its usage per day, model and backend.
import { DurableObject } from "cloudflare:workers";
import { randomUuid } from "../lib/ids.ts";
import type { UsageReport, UsageRow } from "./key-record.ts";
import { advanceReservation, dayOf, dayRefusal, decideAdmission, isCount, LEASE_TTL_MS, slotRefusal, WINDOW_MS, type Admission, type GateState, type KeyLimits } from "./limit-math.ts";
import { usageLabel } from "./usage-label.ts";

/** How long a socket lease lasts unrenewed: an open socket renews it every SOCKET_RENEW_MS. */
export const SOCKET_LEASE_TTL_MS = 30_000;
export const SOCKET_RENEW_MS = 10_000;

export type SocketLease = { ok: true; leaseId: string } | { ok: false; code: "too_many_sockets" | "invalid_api_key"; message: string };

/** `reserved`: the tokens an admission's hold reserved in advance (advanceReservation; 0 or absent: none). */
export type GateAdmission = (Admission & { leaseId?: string; reserved?: number }) | { ok: false; code: "invalid_api_key"; retryAfter: 0; message: string };

/**
 * One key's exact counters (one instance per key id): admissions in the last minute, the holds of the
 * requests running on a model (each a concurrency slot and the tokens it reserved from the day), with
 * a TTL, and usage per day, model and backend. A Durable Object runs one call at a time, so a burst
 * of concurrent admissions and reservations is counted exactly.
 */
export class KeyGate extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS hits (ts INTEGER NOT NULL)");
    // Admissions are pruned and read by time: without it each admission scanned every hit of the last
    // minute (2.6 ms of CPU per request at a few thousand a minute, issue 47).
    sql.exec("CREATE INDEX IF NOT EXISTS hits_ts ON hits (ts)");
    // A hold: one running request's slot and its reservation (tokens, counted against `day`). It
    // replaces the `leases` table of slots alone: a lease left there from before expires in a minute.
    sql.exec("CREATE TABLE IF NOT EXISTS holds (id TEXT PRIMARY KEY, expires INTEGER NOT NULL, day TEXT NOT NULL, tokens INTEGER NOT NULL)");
    sql.exec("DROP TABLE IF EXISTS leases");
    sql.exec(`CREATE TABLE IF NOT EXISTS usage (day TEXT NOT NULL, model TEXT NOT NULL, backend TEXT NOT NULL,
      requests INTEGER NOT NULL, prompt INTEGER NOT NULL, completion INTEGER NOT NULL, errors INTEGER NOT NULL,
      PRIMARY KEY (day, model, backend))`);
    sql.exec("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)");
    // A socket lease: one open Responses WebSocket of the key, renewed while it is open.
    sql.exec("CREATE TABLE IF NOT EXISTS sockets (id TEXT PRIMARY KEY, expires INTEGER NOT NULL)");
  }

  /**
   * A lease for one more open socket of the key, unless `max` are open (counted across isolates;
   * a socket its isolate lost expires SOCKET_LEASE_TTL_MS after its last renewal) or the key was revoked.
   */
  openSocket(max: number): SocketLease {
    if (this.revoked()) return { ok: false, code: "invalid_api_key", message: "This API key was revoked." };
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    sql.exec("DELETE FROM sockets WHERE expires <= ?", now);
    const open = Number(sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM sockets").one().n);
    if (open >= max) {
      return { ok: false, code: "too_many_sockets", message: `This key has ${open} WebSockets open, its limit (limits.maxSocketsPerKey); close one (or end a session) and connect again.` };
    }
    const id = randomUuid();
    sql.exec("INSERT INTO sockets (id, expires) VALUES (?, ?)", id, now + SOCKET_LEASE_TTL_MS);
    return { ok: true, leaseId: id };
  }

  /** Keeps a socket's lease; false when the key was revoked (the socket must close). */
  renewSocket(leaseId: string): boolean {
    if (this.revoked()) return false;
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO sockets (id, expires) VALUES (?, ?)", leaseId, Date.now() + SOCKET_LEASE_TTL_MS);
    return true;
  }

  closeSocket(leaseId: string): void {
    this.ctx.storage.sql.exec("DELETE FROM sockets WHERE id = ?", leaseId);
  }

  /** Open sockets of the key (for tests and the admin view). */
  openSockets(): number {
    return Number(this.ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM sockets WHERE expires > ?", Date.now()).one().n);
  }

  /**
   * Admits one request against the key's limits, or says why not. `lease`: it runs on a model, so it
   * takes a hold (a concurrency slot, which reserve() adds its tokens to). With a day far from its
   * limit the hold reserves tokens in advance (advanceReservation, said in `reserved`): a request
   * whose estimate fits them makes no reserve() call.
   */
  admit(limits: KeyLimits, lease: boolean): GateAdmission {
    const sql = this.ctx.storage.sql;
    if (this.revoked()) return { ok: false, code: "invalid_api_key", retryAfter: 0, message: "This API key was revoked." };
    const now = Date.now();
    sql.exec("DELETE FROM hits WHERE ts <= ?", now - WINDOW_MS);
    const state = this.state(limits, now);
    const decision = decideAdmission(state, limits, now, lease);
    if (!decision.ok) return decision;
    if (limits.rpm !== undefined) sql.exec("INSERT INTO hits (ts) VALUES (?)", now);
    if (!lease) return decision;
    const reserved = advanceReservation(state, limits);
    return reserved > 0 ? { ok: true, leaseId: this.hold(now, reserved), reserved } : { ok: true, leaseId: this.hold(now, 0) };
  }

  /**
   * Reserves `tokens` of today's `tokensPerDay` for a running request: on its hold `leaseId`, or on a
   * new hold (taking a concurrency slot) when it has none. Refused when they do not fit what is left
   * once what was charged today and what the other running requests reserved are counted; a refused
   * request's hold is released at once.
   */
  reserve(leaseId: string | undefined, limits: KeyLimits, tokens: number): GateAdmission {
    const sql = this.ctx.storage.sql;
    if (this.revoked()) return { ok: false, code: "invalid_api_key", retryAfter: 0, message: "This API key was revoked." };
    const now = Date.now();
    const own = leaseId ? sql.exec<{ tokens: number }>("SELECT tokens FROM holds WHERE id = ? AND expires > ?", leaseId, now).toArray()[0] : undefined;
    const state = this.state(limits, now);
    // This request's own hold is not a slot it waits for, nor a reservation in its way.
    if (own) {
      state.leases -= 1;
      state.reserved = (state.reserved ?? 0) - own.tokens;
    }
    const refusal = dayRefusal(state, limits, now, Math.max(1, Math.ceil(tokens))) ?? (own ? null : slotRefusal(state, limits));
    if (refusal) {
      if (leaseId) sql.exec("DELETE FROM holds WHERE id = ?", leaseId);
      return refusal;
    }
    if (own) {
      sql.exec("UPDATE holds SET tokens = ?, day = ?, expires = ? WHERE id = ?", Math.ceil(tokens), dayOf(now), now + LEASE_TTL_MS, leaseId!);
      return { ok: true, leaseId: leaseId! };
    }
    return { ok: true, leaseId: this.hold(now, Math.ceil(tokens)) };
  }

  /** Keeps a running request's hold (its slot and reservation) alive. */
  renew(leaseId: string): void {
    this.ctx.storage.sql.exec("UPDATE holds SET expires = ? WHERE id = ?", Date.now() + LEASE_TTL_MS, leaseId);
  }

  /**
   * Records what a request used and releases its hold, in one transaction: the charge replaces the
   * reservation. The row's model and backend are bounded (usageLabel) and its counts whole numbers,
   * so the row can always be written.
   */
  settle(report: UsageReport): void {
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      sql.exec(
        `INSERT INTO usage (day, model, backend, requests, prompt, completion, errors) VALUES (?, ?, ?, 1, ?, ?, ?)
         ON CONFLICT (day, model, backend) DO UPDATE SET requests = requests + 1, prompt = prompt + excluded.prompt,
         completion = completion + excluded.completion, errors = errors + excluded.errors`,
        dayOf(Date.now()),
        usageLabel(String(report.model)),
        usageLabel(String(report.backend)),
        count(report.promptTokens),
        count(report.completionTokens),
        report.error ? 1 : 0,
      );
      if (report.leaseId) sql.exec("DELETE FROM holds WHERE id = ?", report.leaseId);
    });
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

  /** Live holds: the key's requests running on a model (for tests and the admin view). */
  activeLeases(): number {
    return Number(this.ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM holds WHERE expires > ?", Date.now()).one().n);
  }

  /** Tokens reserved today by the key's running requests. */
  reservedTokens(): number {
    const now = Date.now();
    return Number(this.ctx.storage.sql.exec<{ n: number }>("SELECT COALESCE(SUM(tokens), 0) AS n FROM holds WHERE expires > ? AND day = ?", now, dayOf(now)).one().n);
  }

  revoke(): void {
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO meta (k, v) VALUES ('revoked', '1')");
    this.ctx.storage.sql.exec("DELETE FROM holds");
    this.ctx.storage.sql.exec("DELETE FROM sockets");
  }

  private revoked(): boolean {
    return this.ctx.storage.sql.exec("SELECT 1 FROM meta WHERE k = 'revoked'").toArray().length > 0;
  }

  /** The counters a decision needs, expired holds dropped first. */
  private state(limits: KeyLimits, now: number): GateState {
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM holds WHERE expires <= ?", now);
    // Of the last minute's admissions, their count and the rpm-th newest (all a decision reads), never all of them.
    const hitCount = limits.rpm !== undefined ? Number(sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM hits").one().n) : 0;
    const hits =
      limits.rpm !== undefined && hitCount >= limits.rpm
        ? sql.exec<{ ts: number }>("SELECT ts FROM hits ORDER BY ts DESC LIMIT 1 OFFSET ?", limits.rpm - 1).toArray().map((r) => r.ts)
        : [];
    const leases = Number(sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM holds").one().n);
    if (limits.tokensPerDay === undefined) return { hits, hitCount, leases, tokensToday: 0, reserved: 0 };
    const day = dayOf(now);
    const tokensToday = Number(sql.exec<{ n: number }>("SELECT COALESCE(SUM(prompt + completion), 0) AS n FROM usage WHERE day = ?", day).one().n);
    const reserved = Number(sql.exec<{ n: number }>("SELECT COALESCE(SUM(tokens), 0) AS n FROM holds WHERE day = ?", day).one().n);
    return { hits, hitCount, leases, tokensToday, reserved };
  }

  private hold(now: number, tokens: number): string {
    const id = randomUuid();
    this.ctx.storage.sql.exec("INSERT INTO holds (id, expires, day, tokens) VALUES (?, ?, ?, ?)", id, now + LEASE_TTL_MS, dayOf(now), tokens);
    return id;
  }
}

/** A token count as stored: a whole non-negative number (anything else counts 0). */
function count(n: number): number {
  const rounded = Math.round(n);
  return isCount(rounded) ? rounded : 0;
}
