// The batches not finished yet, across every key (the status page and /metrics): each key's
// BatchStore asked for its active batches, keys read from the KeyStore.
import { keyStore, storeName } from "../auth/key-directory.ts";
import { durableNamespace } from "../config/env-vars.ts";
import type { Batch } from "./batch-object.ts";
import type { BatchStore } from "./batch-store.ts";
import type { BatchProgress } from "./batch-progress.ts";

export type { BatchProgress };


/** The keys asked at most (a status page poll must stay a bounded fan-out). */
const MAX_KEYS = 200;

export async function batchesInProgress(env: Env): Promise<BatchProgress[]> {
  const keys = (await keyStore(env).list()).filter((k) => k.revokedAt === null && k.scopes.includes("chat")).slice(0, MAX_KEYS);
  const owners: Array<{ owner: string; name: string | null }> = [...keys.map((k) => ({ owner: `key:${k.id}`, name: k.name })), { owner: "anonymous", name: null }];
  const ns = durableNamespace<BatchStore>(env, "BATCH_STORE");
  const lists = await Promise.all(
    owners.map(async ({ owner, name }) => {
      const active = (await ns.getByName(`${storeName(env)}:${owner}`).active()) as Batch[];
      return active.map((b): BatchProgress => ({ key: name, id: b.id, status: b.status, endpoint: b.endpoint, model: b.model, request_counts: b.request_counts, created_at: b.created_at, expires_at: b.expires_at }));
    }),
  );
  return lists.flat().sort((a, b) => a.created_at - b.created_at);
}

/** Prometheus lines: the lines of unfinished batches by state. */
export function batchMetrics(batches: BatchProgress[]): string {
  let done = 0;
  let failed = 0;
  let pending = 0;
  for (const b of batches) {
    done += b.request_counts.completed;
    failed += b.request_counts.failed;
    pending += b.request_counts.total - b.request_counts.completed - b.request_counts.failed;
  }
  return [
    "# HELP switchyard_batches_active Batches not finished yet (validating, in progress, finalizing, cancelling).",
    "# TYPE switchyard_batches_active gauge",
    `switchyard_batches_active ${batches.length}`,
    "# HELP switchyard_batch_lines Lines of the unfinished batches, by state.",
    "# TYPE switchyard_batch_lines gauge",
    `switchyard_batch_lines{state="completed"} ${done}`,
    `switchyard_batch_lines{state="failed"} ${failed}`,
    `switchyard_batch_lines{state="pending"} ${pending}`,
    "",
  ].join("\n");
}
