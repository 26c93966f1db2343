import { DurableObject } from "cloudflare:workers";

/**
 * Stored Responses API objects (one instance per owner: a key id, a hashed credential, or
 * "anonymous"), and in the instance "seal-key" the deployment's sealing key.
 */
export class ResponseStore extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS seal_key (id INTEGER PRIMARY KEY CHECK (id = 1), key BLOB NOT NULL)");
  }

  /** The sealing key, made on first use. */
  sealKey(): ArrayBuffer {
    const row = this.ctx.storage.sql.exec<{ key: ArrayBuffer }>("SELECT key FROM seal_key WHERE id = 1").toArray()[0];
    if (row) return row.key;
    const key = crypto.getRandomValues(new Uint8Array(32));
    this.ctx.storage.sql.exec("INSERT INTO seal_key (id, key) VALUES (1, ?)", key.buffer);
    return key.buffer;
  }
}
