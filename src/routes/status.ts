// GET /v1/admin/status: the data behind the status page, for admins only.
import type { Context } from "hono";
import { batchesInProgress } from "../batch/batches-in-progress.ts";
import type { AppEnv } from "../auth/app-env.ts";
import { requireAdmin } from "../auth/principal.ts";
import { routerTargets, zeroConfigTargets, type Config } from "../config/config.ts";
import { loadConfig } from "../config/load-config.ts";
import { statusBody, type Configured } from "../health/status-body.ts";
import { capabilitiesOf, named } from "../upstreams/registry/adapters.ts";
import { operatorStatus } from "./metrics.ts";

/** `GET /v1/admin/status`: the status page's data (public/status.html polls it), admin only. */
export async function status(c: Context<AppEnv>): Promise<Response> {
  await requireAdmin(c);
  const [operator, batches] = await Promise.all([operatorStatus(c.env), batchesInProgress(c.env)]);
  return c.json({ ...statusBody(operator, Date.now(), configuredOf(c.env)), batches }, 200, { "cache-control": "no-store" });
}

/** The targets and servers the configuration names (its models' targets and its routers; zero config: its llama-server); none while it is invalid. */
function configuredOf(env: Env): Configured {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch {
    return { targets: [], upstreams: [] };
  }
  const declared = [
    ...(config.models ? Object.values(config.models).flatMap((m) => m.targets) : zeroConfigTargets(config, "").filter((t) => !t.implicit).map((t) => t.target)),
    ...routerTargets(config),
  ];
  const targets = declared.map((t) => named(t));
  return {
    targets: [...new Set(targets.map((t) => t.name))],
    upstreams: [...new Set(targets.flatMap((t) => capabilitiesOf(t).server?.key ?? []))],
  };
}
