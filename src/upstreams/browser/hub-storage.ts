// What the SessionHub keeps in its SQLite storage: one-use session tickets (each with the grant the
// session it opens will hold) and the admin's last word on each serve key (revoked, or its serves),
// applied to every grant at connect.
import { randomHex } from "../../lib/ids.ts";
import { applyServeKeyChange, readGrant, type ServeGrant, type ServeKeyChange } from "./serve-grant.ts";

/** How long a ticket from `POST /v1/sessions/ticket` stays valid. */
export const TICKET_TTL_MS = 60_000;

export class HubStorage {
  constructor(private readonly sql: SqlStorage) {
    sql.exec("CREATE TABLE IF NOT EXISTS tickets (ticket TEXT PRIMARY KEY, expires INTEGER NOT NULL, serve_grant TEXT)");
    // Tickets stored before grants existed: the column is added; such a ticket admits nobody's requests.
    if (!sql.exec("SELECT * FROM tickets LIMIT 0").columnNames.includes("serve_grant")) sql.exec("ALTER TABLE tickets ADD COLUMN serve_grant TEXT");
    sql.exec("CREATE TABLE IF NOT EXISTS serve_keys (key_id TEXT PRIMARY KEY, revoked INTEGER NOT NULL, serves TEXT)");
  }

  /** A one-use ticket for `GET /v1/sessions?ticket=…`; the session it opens holds `grant`. */
  issueTicket(grant: ServeGrant, now = Date.now()): { ticket: string; expiresInMs: number } {
    this.sql.exec("DELETE FROM tickets WHERE expires < ?", now);
    const ticket = randomHex("tk_", 24);
    this.sql.exec("INSERT INTO tickets (ticket, expires, serve_grant) VALUES (?, ?, ?)", ticket, now + TICKET_TTL_MS, JSON.stringify(grant));
    return { ticket, expiresInMs: TICKET_TTL_MS };
  }

  /** Uses up a ticket: the grant it was issued with, or null for a ticket that is unknown, used, expired or from before grants existed. */
  redeemTicket(ticket: string, now = Date.now()): ServeGrant | null {
    const row = this.sql.exec<{ expires: number; serve_grant: string | null }>("DELETE FROM tickets WHERE ticket = ? RETURNING expires, serve_grant", ticket).toArray()[0];
    if (!row || row.expires < now) return null;
    return readGrant(row.serve_grant);
  }

  /** The admin revoked a serve key or changed its `serves`. */
  recordChange(keyId: string, change: ServeKeyChange): void {
    const serves = change.revoked ? null : JSON.stringify(change.serves);
    // A revocation is final: a later change of serves does not undo it.
    this.sql.exec(
      "INSERT INTO serve_keys (key_id, revoked, serves) VALUES (?, ?, ?) ON CONFLICT (key_id) DO UPDATE SET revoked = MAX(revoked, excluded.revoked), serves = excluded.serves",
      keyId,
      change.revoked ? 1 : 0,
      serves,
    );
  }

  /** The last change recorded for a serve key, if any. */
  changeOf(keyId: string): ServeKeyChange | undefined {
    const row = this.sql.exec<{ revoked: number; serves: string | null }>("SELECT revoked, serves FROM serve_keys WHERE key_id = ?", keyId).toArray()[0];
    if (!row) return undefined;
    if (row.revoked) return { revoked: true };
    // Written by recordChange: the JSON of `serves` (null: every key's requests, or an array of key ids).
    return { revoked: false, serves: JSON.parse(row.serves ?? "null") as string[] | null };
  }

  /**
   * The grant a connecting session holds: `sent` (what the Worker read of its key) as it stands after
   * what the admin did to that key since; null when the key was revoked.
   */
  grantAtConnect(sent: ServeGrant): ServeGrant | null {
    return applyServeKeyChange(sent, sent.keyId === null ? undefined : this.changeOf(sent.keyId));
  }
}
