// GET /v1/admin/status: the data behind the status page, for admins only.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { requireAdmin } from "../auth/principal.ts";
import { statusBody } from "../health/status-body.ts";
import { operatorStatus } from "./metrics.ts";

/** `GET /v1/admin/status`: the status page's data (public/status.html polls it), admin only. */
export async function status(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  return c.json(statusBody(await operatorStatus(c.env), Date.now()), 200, { "cache-control": "no-store" });
}
