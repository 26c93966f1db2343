// The Durable Object that slows key guessing: it counts one client address's failed
// authentications and says how long the address is blocked.
import { DurableObject } from "cloudflare:workers";
import { WINDOW_MS } from "./limit-math.ts";

/** More failed authentications than this in a minute from one address answer 429. */
export const MAX_FAILED_AUTH_PER_MINUTE = 20;

/** Failed authentications from one client address (one instance per address). */
export class AuthGuard extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS fails (ts INTEGER NOT NULL)");
  }

  /** Records a failure; returns how long the address is blocked (0: not blocked). */
  fail(): { blockedForS: number } {
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    sql.exec("DELETE FROM fails WHERE ts <= ?", now - WINDOW_MS);
    sql.exec("INSERT INTO fails (ts) VALUES (?)", now);
    return this.state(now);
  }

  check(): { blockedForS: number } {
    const now = Date.now();
    this.ctx.storage.sql.exec("DELETE FROM fails WHERE ts <= ?", now - WINDOW_MS);
    return this.state(now);
  }

  private state(now: number): { blockedForS: number } {
    const rows = this.ctx.storage.sql.exec<{ ts: number }>("SELECT ts FROM fails ORDER BY ts").toArray();
    if (rows.length <= MAX_FAILED_AUTH_PER_MINUTE) return { blockedForS: 0 };
    // Blocked until enough failures age out of the window to fall back to the limit.
    const release = rows[rows.length - MAX_FAILED_AUTH_PER_MINUTE - 1]!.ts + WINDOW_MS;
    return { blockedForS: Math.max(1, Math.ceil((release - now) / 1000)) };
  }
}
