// GET /v1/usage: any key reads its own usage, without an admin's help.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { keyGate } from "../auth/key-directory.ts";
import { ProxyError } from "../errors/proxy-error.ts";
import { publicRecord, sinceDay, summarize } from "./admin.ts";

/** `GET /v1/usage[?since=YYYY-MM-DD]`: the caller's own key's usage per day, model and backend. */
export async function ownUsage(c: Context<AppEnv>): Promise<Response> {
  const key = c.get("principal");
  if (!key) throw new ProxyError({ status: 401, code: "missing_api_key", message: "Usage is kept per key: send your key as Authorization: Bearer <key>." });
  const since = sinceDay(c.req.queries("since"));
  return c.json({ key: publicRecord(key), since: since ?? null, ...summarize(await keyGate(c.env, key.id).usage(since)) });
}
