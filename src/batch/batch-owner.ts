// Whose batch work a request may see, and the BatchStore instance that keeps it: one per key (in open
// mode, per presented credential, as stored responses are), so another key's ids are a 404.
import type { Context } from "hono";
import type { AppEnv } from "../auth/app-env.ts";
import { storeName } from "../auth/key-directory.ts";
import { responseOwner } from "../api/responses/index.ts";
import { durableNamespace } from "../config/env-vars.ts";
import type { BatchStore } from "./batch-store.ts";

export async function batchStore(c: Context<AppEnv>): Promise<DurableObjectStub<BatchStore>> {
  const owner = await responseOwner(c);
  return durableNamespace<BatchStore>(c.env, "BATCH_STORE").getByName(`${storeName(c.env)}:${owner}`);
}
